"""A small causal transformer trained with DeepSpeed ZeRO stage 3, as a user
writes it: deepspeed.initialize with the JSON config given on the command
line (deepspeed_zero3.json), engine.backward and engine.step; launched with
the `deepspeed` launcher. The tokens are generated. DeepSpeed prints its own
throughput and memory lines (steps_per_print). usage: deepspeed_zero3.py
--deepspeed_config FILE [--steps N]"""
import argparse

import deepspeed
import torch
import torch.nn as nn

VOCAB, DIM, LAYERS, HEADS, SEQ = 4096, 512, 4, 8, 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        layer = nn.TransformerEncoderLayer(DIM, HEADS, 4 * DIM, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        return self.head(self.blocks(self.embed(ids), mask=mask, is_causal=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    deepspeed.init_distributed()
    model = Model()
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    batch = engine.train_micro_batch_size_per_gpu()
    params = sum(p.ds_numel if hasattr(p, "ds_numel") else p.numel() for p in model.parameters())
    if engine.global_rank == 0:
        print(f"model: {params} parameters, {batch * SEQ} tokens per step per GPU", flush=True)
    gen = torch.Generator(device="cpu").manual_seed(engine.global_rank)
    for _ in range(args.steps):
        ids = torch.randint(0, VOCAB, (batch, SEQ + 1), generator=gen).to(engine.device)
        logits = engine(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.float().view(-1, VOCAB), ids[:, 1:].reshape(-1))
        engine.backward(loss)
        engine.step()
    torch.distributed.destroy_process_group()  # as torch asks: its watchdog thread stops before exit


if __name__ == "__main__":
    main()
