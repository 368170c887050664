"""Tensor parallelism on DTensor under torchrun: a DeviceMesh over the ranks, an MLP block's
first linear split by columns and its second by rows (parallelize_module), forward and backward
in bf16, timed by CUDA events. The third step's time must match its GEMMs' arithmetic (each rank
computes 1/tp of the six products of 8 x 2048 tokens by 4096 x 16384) at 30 to 100 % of an
H200's 989 bf16 TFLOP/s. Prints "tensor parallel: ok".

With --fsdp, a 2-D mesh (data parallel x tensor parallel 2, as TorchTitan builds it): the
tensor-parallel block is also sharded over the data-parallel dimension by FSDP2 (fully_shard),
whose all-gathers and reduce-scatters run on the other dimension's communicators.
"""
import os
import sys

import torch
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

world = int(os.environ["WORLD_SIZE"])
fsdp = "--fsdp" in sys.argv
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
tp = 2 if fsdp else world
mesh = init_device_mesh("cuda", (world // tp, tp), mesh_dim_names=("dp", "tp"))
mlp = nn.Sequential(nn.Linear(4096, 16384, bias=False), nn.GELU(), nn.Linear(16384, 4096, bias=False)).cuda()
mlp = parallelize_module(mlp, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
if fsdp:
    from torch.distributed.fsdp import fully_shard

    fully_shard(mlp, mesh=mesh["dp"])
x = torch.empty(8, 2048, 4096, device="cuda")
rank = mesh.get_rank()
ms = 0.0
for step in range(3):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = mlp(x)
    y.float().sum().backward()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    if rank == 0:
        print(f"step {step}: {ms:.3f} ms", flush=True)
flops = 6 * 2 * (8 * 2048) * 4096 * 16384 / tp
tflops = flops / (ms * 1e-3) / 1e12
assert 0.3 * 989 < tflops < 989, f"step 2: {tflops:.0f} TFLOP/s"
torch.distributed.destroy_process_group()
if rank == 0:
    print(f"step 2 ran its GEMMs at {tflops:.0f} TFLOP/s", flush=True)
    print("tensor parallel: ok", flush=True)
