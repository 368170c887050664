"""Where a launch-bound GPT step's host time goes: examples/torch/gpt.py's model (a tiny one by default),
each step's forward, backward, optimizer and final synchronize timed by the host's clock, medians over the
steps after the warmup. Run for real and under hysim (host_time real) on the same GPU host: the phase that
differs is where hysim's host clock misses or adds time (bench/RESULTS.md, "Host time on the real host's own CPU").
usage: python3 bench/real/torch_step_phases.py [--layers L --dim D --heads H --seq S --batch B --dtype T]"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../examples/torch"))
from gpt import GPT  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=2)
p.add_argument("--dim", type=int, default=256)
p.add_argument("--heads", type=int, default=4)
p.add_argument("--seq", type=int, default=128)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--vocab", type=int, default=32768)
p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
p.add_argument("--steps", type=int, default=30)
p.add_argument("--warmup", type=int, default=5)
args = p.parse_args()
dev = torch.device("cuda")
torch.manual_seed(0)
model = GPT(args.vocab, args.dim, args.heads, args.layers, args.seq).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.dtype == "bf16")
phases = {k: [] for k in ("inputs", "forward", "backward", "optimizer", "synchronize", "step")}
for step in range(args.steps):
    torch.cuda.synchronize()
    t = [time.perf_counter()]
    x = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
    y = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
    t.append(time.perf_counter())
    with autocast:
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    t.append(time.perf_counter())
    loss.backward()
    t.append(time.perf_counter())
    opt.step()
    opt.zero_grad(set_to_none=True)
    t.append(time.perf_counter())
    torch.cuda.synchronize()
    t.append(time.perf_counter())
    if step >= args.warmup:
        for i, k in enumerate(list(phases)[:-1]):
            phases[k].append(t[i + 1] - t[i])
        phases["step"].append(t[-1] - t[0])
print(f"# torch_step_phases: {' '.join(sys.argv[1:]) or 'tiny'}, torch {torch.__version__}, "
      f"{torch.cuda.get_device_name()}, medians of {args.steps - args.warmup} steps")
for k, v in phases.items():
    print(f"{k:12s} {statistics.median(v) * 1e6:9.0f} us")
