"""A rank killed mid-run: rank 1 of a torchrun job SIGKILLs itself after an all-reduce, while
rank 0 goes on to another one that needs it. The run must end, naming the dead process.
"""
import os
import signal

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(rank)
x = torch.empty(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {rank}: first all-reduce done", flush=True)
if rank == 1:
    os.kill(os.getpid(), signal.SIGKILL)
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {rank}: second all-reduce done (it should not be)", flush=True)
