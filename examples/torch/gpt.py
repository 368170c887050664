"""A small GPT trained on random tokens: the PyTorch program hysim's demos and tests run.

Runs unchanged on real GPUs and under `hysim run`. Single process:
    python gpt.py
Data parallel or fully sharded, one process per GPU:
    torchrun --standalone --nproc_per_node=8 gpt.py --ddp
    torchrun --standalone --nproc_per_node=4 gpt.py --fsdp
Its own clocks (time.perf_counter, torch.cuda.Event) time each step; under hysim
they read the simulated cluster's time.
"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim, bias=False)
        self.out = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, dim, heads, layers, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=8, help="sequences per GPU and step")
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2, help="steps left out of the mean")
    p.add_argument("--ddp", action="store_true", help="DistributedDataParallel")
    p.add_argument("--fsdp", action="store_true", help="FSDP2 (fully_shard)")
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16", help="autocast type")
    args = p.parse_args()

    distributed = args.ddp or args.fsdp
    rank, world = 0, 1
    if distributed:
        import torch.distributed as dist
        dist.init_process_group("nccl")
        rank, world = dist.get_rank(), dist.get_world_size()
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda")
    torch.manual_seed(0)

    model = GPT(args.vocab, args.dim, args.heads, args.layers, args.seq).to(dev)
    params = sum(p.numel() for p in model.parameters())
    if args.ddp:
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model)
    elif args.fsdp:
        from torch.distributed.fsdp import fully_shard
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.dtype == "bf16")

    if rank == 0:
        mode = "DDP" if args.ddp else "FSDP2" if args.fsdp else "single GPU"
        print(f"gpt: {params / 1e6:.1f} M parameters, {args.layers} layers, dim {args.dim}, "
              f"seq {args.seq}, batch {args.batch} x {world} GPUs ({mode}, {args.dtype}), "
              f"{torch.cuda.get_device_name()}", flush=True)
    times = []
    for step in range(args.steps):
        x = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
        y = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        with autocast:
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if step >= args.warmup:
            times.append(dt)
        if rank == 0:
            print(f"step {step}: {dt * 1e3:.3f} ms (cuda events {start.elapsed_time(end):.3f} ms), "
                  f"loss {loss.item():.4f}", flush=True)
    if rank == 0:
        mean = sum(times) / len(times) if times else math.nan
        tokens = args.batch * args.seq * world
        print(f"gpt: mean step {mean * 1e3:.3f} ms, {tokens / mean:.0f} tokens/s, "
              f"peak memory {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB allocated, "
              f"{torch.cuda.max_memory_reserved() / 2**20:.1f} MiB reserved", flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
