"""torch.multiprocessing.spawn with env:// rendezvous (no torchrun): each of N processes
joins an NCCL process group, all-reduces a tensor a few times and times it with CUDA events.
usage: python spawn_allreduce.py N
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    dist.init_process_group("nccl", init_method="env://", rank=rank, world_size=world)
    torch.cuda.set_device(rank)
    x = torch.empty(64 << 20, dtype=torch.bfloat16, device="cuda")
    dist.all_reduce(x)  # warm-up: the communicator
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        dist.all_reduce(x)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / 5
    busbw = 2 * (world - 1) / world * x.numel() * 2 / (ms * 1e-3) / 1e9
    # one write: print's text and newline are two, which another process's line can come between
    sys.stdout.write(f"rank {rank}: all_reduce 128 MiB {ms:.3f} ms, busbw {busbw:.0f} GB/s\n")
    sys.stdout.flush()
    dist.destroy_process_group()


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    n = int(sys.argv[1])
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    mp.spawn(worker, args=(n,), nprocs=n)
