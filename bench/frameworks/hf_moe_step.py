"""A small Hugging Face mixture of experts (Mixtral: 2 layers, 8 experts, top 2) trained for a few steps on one
GPU, its experts run by the implementation named: eager (a loop over torch.nonzero of the routing) or grouped_mm
(torch.histc and torch._grouped_mm). Prints each step's time (CUDA synchronized) and the median from step 3.
For bench/RESULTS.md, "A mixture of experts on one real H200" (bench/real/moe_real.sh, bench/frameworks/moe_sim.sh).
With "large": 4 layers of width 2048, experts of 2048 -> 5632 and 8 x 1024 tokens a step, so that the GPU, not
the host, sets the step (bench/RESULTS.md, "Grouped GEMMs").
Under torchrun with more than one process: DDP, each rank its own batch (rank 0 prints).
usage: hf_moe_step.py eager|grouped_mm [STEPS [large]]"""
import os
import statistics
import sys
import time

import torch
from transformers import MixtralConfig, MixtralForCausalLM

impl, steps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10
large = len(sys.argv) > 3 and sys.argv[3] == "large"
width, inner, layers, batch, seq = (2048, 5632, 4, 8, 1024) if large else (512, 1024, 2, 4, 512)
config = MixtralConfig(vocab_size=4096, hidden_size=width, intermediate_size=inner, num_hidden_layers=layers,
                       num_attention_heads=16 if large else 8, num_key_value_heads=8, num_local_experts=8,
                       num_experts_per_tok=2)
config._experts_implementation = impl
ranks = int(os.environ.get("WORLD_SIZE", "1"))
if ranks > 1:
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.distributed.init_process_group("nccl")
model = MixtralForCausalLM(config).cuda().to(torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
if ranks > 1:
    model = torch.nn.parallel.DistributedDataParallel(model)
quiet = ranks > 1 and torch.distributed.get_rank() != 0
ids = torch.randint(0, config.vocab_size, (batch, seq), device="cuda")
times = []
for step in range(1, steps + 1):
    torch.cuda.synchronize()
    start = time.perf_counter()
    model(ids, labels=ids).loss.backward()
    opt.step()
    opt.zero_grad()
    torch.cuda.synchronize()
    times.append(1e3 * (time.perf_counter() - start))
    if not quiet:
        print(f"{impl} step {step}: {times[-1]:.3f} ms", flush=True)
if not quiet:
    print(f"{impl}: median from step 3 {statistics.median(times[2:]):.3f} ms, peak memory "
          f"{torch.cuda.max_memory_allocated() / 2**20:.1f} MiB" + (f", {ranks} ranks, DDP" if ranks > 1 else ""),
          flush=True)
if ranks > 1:
    torch.distributed.destroy_process_group()
