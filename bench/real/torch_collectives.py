"""Every torch.distributed collective (NCCL backend, one process per GPU, as
torchrun starts them) timed with CUDA events around ITERS back-to-back warm
calls. Rows use examples/collectives_bench's op names and size convention
(S = the buffer, the gathered output, the scattered input, the all-to-all
input), so the two benches' figures sit side by side.
usage: torchrun --nproc_per_node=N bench/real/torch_collectives.py [SIZE ...]
       (sizes in bytes with K/M/G suffixes; default 1M to 4G by 4; OPS=allreduce,allgather,... times only those)"""
import os
import sys

import torch
import torch.distributed as dist

ITERS, WARMUP = 20, 5


def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1].upper(), 1)
    return int(text.rstrip("KMGkmg")) * scale


def ops(rank, n, S):
    """(name, busbw factor, call) per op; S counted as collectives_bench does."""
    f = torch.float32
    buf = torch.ones(S // 4, device="cuda", dtype=f)
    part = torch.ones(S // 4 // n, device="cuda", dtype=f)
    full = torch.empty(S // 4, device="cuda", dtype=f)
    out = torch.empty(S // 4, device="cuda", dtype=f)
    recv = torch.empty(S // 4, device="cuda", dtype=f)

    def sendrecv():
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, buf, (rank + 1) % n),
                                       dist.P2POp(dist.irecv, recv, (rank - 1) % n)])
        for r in reqs:
            r.wait()

    return [
        ("allreduce", 2 * (n - 1) / n, lambda: dist.all_reduce(buf)),
        ("allgather", (n - 1) / n, lambda: dist.all_gather_into_tensor(full, part)),
        ("reducescatter", (n - 1) / n, lambda: dist.reduce_scatter_tensor(part, buf)),
        ("broadcast", 1.0, lambda: dist.broadcast(buf, 0)),
        ("reduce", 1.0, lambda: dist.reduce(buf, 0)),
        ("alltoall", (n - 1) / n, lambda: dist.all_to_all_single(out, buf)),
        ("sendrecv", 1.0, sendrecv),
    ]


def main():
    sizes = [parse_size(s) for s in sys.argv[1:]] or [1 << (20 + 2 * i) for i in range(7)]
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    for S in sizes:
        if rank == 0:
            print(f"# torch.distributed: {n} x {torch.cuda.get_device_name()}, {S} bytes, float32, "
                  f"{ITERS} iterations ({WARMUP} warm-up), CUDA events, one process per GPU", flush=True)
            print("#%13s %14s %12s %12s %12s" % ("op", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)"))
        wanted = os.environ.get("OPS", "").split(",") if os.environ.get("OPS") else None
        for op, factor, call in ops(rank, n, S):
            if wanted and op not in wanted:
                continue
            for _ in range(WARMUP):
                call()
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(ITERS):
                call()
            stop.record()
            stop.synchronize()
            us = start.elapsed_time(stop) * 1e3 / ITERS
            t = torch.tensor([us], device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slower rank's time, as a user sees it
            if rank == 0:
                algbw = S / (t.item() * 1e3)
                print("%14s %14d %12.2f %12.2f %12.2f" % (op, S, t.item(), algbw, algbw * factor), flush=True)
        torch.cuda.empty_cache()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
