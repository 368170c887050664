"""Writes what the framework tests need and no package ships: a small
word-level tokenizer (tokenizer.json + tokenizer_config.json, as Hugging Face
and TorchTitan load them) and a JSON-lines text corpus of generated words.
Nothing is downloaded. usage: framework_assets.py DIR"""
import json
import os
import random
import sys

from tokenizers import Tokenizer, models, pre_tokenizers

WORDS = ("the a of and gpu cluster token model train data simulated alpha beta gamma delta "
         "switch link ring tree shard tensor pipeline expert batch step loss rank host").split()
SPECIAL = ["<unk>", "<|begin_of_text|>", "<|end_of_text|>", "<pad>"]


def write_tokenizer(folder):
    os.makedirs(folder, exist_ok=True)
    vocab = {t: i for i, t in enumerate(SPECIAL + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(SPECIAL)
    tok.save(os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": SPECIAL[1], "eos_token": SPECIAL[2], "pad_token": SPECIAL[3],
                   "unk_token": SPECIAL[0], "tokenizer_class": "PreTrainedTokenizerFast"}, f)


def write_corpus(path, docs=400, words=300, seed=1):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(docs):
            f.write(json.dumps({"text": " ".join(rng.choice(WORDS) for _ in range(words))}) + "\n")


if __name__ == "__main__":
    root = sys.argv[1]
    write_tokenizer(os.path.join(root, "tokenizer"))
    # TorchTitan's "c4_test" data set reads tests/assets/c4_test under its working directory.
    write_tokenizer(os.path.join(root, "tests", "assets", "tokenizer"))
    write_corpus(os.path.join(root, "tests", "assets", "c4_test", "data.json"))
