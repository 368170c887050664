"""torch.distributed's collectives over hysim's NCCL, each timed by CUDA events, under torchrun:
all_reduce, all_gather_into_tensor, reduce_scatter_tensor, broadcast, all_to_all_single,
send/recv in a ring through batch_isend_irecv, an async handle, barrier, and a new_group of the
even ranks.
Prints one line per collective and "collectives: ok".
"""
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
n = 32 << 20  # elements of bf16: 64 MiB
x = torch.empty(n, dtype=torch.bfloat16, device="cuda")
out = torch.empty(n * world, dtype=torch.bfloat16, device="cuda")
shard = torch.empty(n // world, dtype=torch.bfloat16, device="cuda")


def timed(name, fn):
    fn()  # the first call sets the communicator up
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    assert ms > 0, name
    if rank == 0:
        print(f"{name}: {ms:.3f} ms", flush=True)


timed("all_reduce", lambda: dist.all_reduce(x))
timed("all_gather_into_tensor", lambda: dist.all_gather_into_tensor(out, x))
timed("reduce_scatter_tensor", lambda: dist.reduce_scatter_tensor(shard, x))
timed("broadcast", lambda: dist.broadcast(x, src=0))
timed("all_to_all_single", lambda: dist.all_to_all_single(out[:n], x))
peer = (rank + 1) % world, (rank - 1) % world
recv = torch.empty_like(x)
timed("batch_isend_irecv", lambda: [w.wait() for w in dist.batch_isend_irecv(
    [dist.P2POp(dist.isend, x, peer[0]), dist.P2POp(dist.irecv, recv, peer[1])])])
timed("async all_reduce", lambda: dist.all_reduce(x, async_op=True).wait())
evens = dist.new_group(list(range(0, world, 2)))
if rank % 2 == 0:
    timed("all_reduce on new_group(evens)", lambda: dist.all_reduce(x, group=evens))
dist.barrier()
# docs/values.md: a small collective's receive bytes are computed from every rank's send bytes
flag = torch.tensor([rank + 1], dtype=torch.int64, device="cuda")
dist.all_reduce(flag, op=dist.ReduceOp.MAX)
top = flag.item()  # read once: a kernel after a read may have reused the memory (docs/values.md)
assert top == world, f"all_reduce MAX read {top}, not {world}"
total = torch.tensor([rank + 0.5], device="cuda")
dist.all_reduce(total)
assert total.item() == world * world / 2, f"all_reduce SUM read {total.item()}"
picked = torch.tensor([100 + rank], device="cuda")
dist.broadcast(picked, src=1)
got = picked.item()
assert got == 101, f"broadcast from rank 1 read {got}"
parts = [torch.zeros(2, dtype=torch.int32, device="cuda") for _ in range(world)]
dist.all_gather(parts, torch.tensor([rank, -rank], dtype=torch.int32, device="cuda"))
assert [p.tolist() for p in parts] == [[r, -r] for r in range(world)], f"all_gather read {parts}"
mine = torch.zeros(2, device="cuda")
dist.reduce_scatter_tensor(mine, torch.tensor([k + rank for k in range(2 * world)], dtype=torch.float32, device="cuda"))
assert mine.tolist() == [world * (2 * rank + k) + world * (world - 1) / 2 for k in (0, 1)], f"reduce_scatter read {mine}"
names = [None] * world
dist.all_gather_object(names, f"rank-{rank}")
assert names == [f"rank-{r}" for r in range(world)], f"all_gather_object read {names}"
if rank == 0:
    print(f"values: all_reduce MAX {top}, broadcast {got}, all_gather_object {names}", flush=True)
dist.destroy_process_group()
if rank == 0:
    print("collectives: ok", flush=True)
