"""A small Llama-style causal LM trained with Hugging Face's Trainer, as a
user would write it; launched with `accelerate launch` (DDP, or FSDP by
accelerate's flags). The model is built from a config (no weights are
downloaded); the tokenizer and text are framework_assets.py's, in the
working folder. usage: hf_causal_lm.py [STEPS]"""
import json
import statistics
import sys
import time

import torch
from transformers import (DataCollatorForLanguageModeling, LlamaConfig, LlamaForCausalLM,
                          PreTrainedTokenizerFast, Trainer, TrainerCallback, TrainingArguments)

SEQ = 256


class Chunks(torch.utils.data.Dataset):
    """The corpus tokenized and cut into SEQ-token examples."""

    def __init__(self, tok, path):
        ids = []
        with open(path) as f:
            for line in f:
                ids += tok(json.loads(line)["text"])["input_ids"] + [tok.eos_token_id]
        self.examples = [ids[i:i + SEQ] for i in range(0, len(ids) - SEQ + 1, SEQ)]

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return {"input_ids": self.examples[i]}


class StepTimes(TrainerCallback):
    """Each step's wall time as the script sees it (time.perf_counter, from one step's end to the next's)."""

    def __init__(self):
        self.times, self.last = [], None

    def on_step_end(self, args, state, control, **kwargs):
        now = time.perf_counter()
        if self.last is not None:
            self.times.append(now - self.last)
        self.last = now


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    tok = PreTrainedTokenizerFast.from_pretrained("./tokenizer")
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                      num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=SEQ,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = LlamaForCausalLM(cfg)
    args = TrainingArguments(output_dir="hf_out", per_device_train_batch_size=8, max_steps=steps, logging_steps=1,
                             learning_rate=3e-4, bf16=True, report_to=[], save_strategy="no",
                             dataloader_num_workers=0, disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=Chunks(tok, "tests/assets/c4_test/data.json"),
                      data_collator=DataCollatorForLanguageModeling(tok, mlm=False), callbacks=[StepTimes()])
    if trainer.is_world_process_zero():
        params = sum(p.numel() for p in model.parameters())
        print(f"model: {params} parameters, {args.per_device_train_batch_size * SEQ} tokens per step per GPU",
              flush=True)
    trainer.train()
    if trainer.is_world_process_zero():
        steps = next(c for c in trainer.callback_handler.callbacks if isinstance(c, StepTimes)).times[1:]
        median = 1e3 * statistics.median(steps) if steps else 0.0
        print(f"step time: median {median:.2f} ms over steps 3..{len(steps) + 2}; "
              f"peak memory: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB allocated", flush=True)
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()  # as torch asks: its watchdog thread stops before exit


if __name__ == "__main__":
    main()
