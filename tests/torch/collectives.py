"""torch.distributed's collectives over hysim's NCCL, each timed by CUDA events, under torchrun:
all_reduce, all_gather_into_tensor, reduce_scatter_tensor, broadcast, all_to_all_single,
send/recv in a ring through batch_isend_irecv, an async handle, barrier, and a new_group of the
even ranks; then the values small collectives, sends and a mixture of experts' dispatch read back.
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
# A Recv's bytes are its Send's; an all-to-all of small tensors carries every rank's bytes.
ring = torch.tensor([rank * 7 + 1, rank], dtype=torch.int64, device="cuda")
heard = torch.zeros(2, dtype=torch.int64, device="cuda")
[w.wait() for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, ring, peer[0]), dist.P2POp(dist.irecv, heard, peer[1])])]
heard = heard.tolist()  # read once, as above
assert heard == [peer[1] * 7 + 1, peer[1]], f"recv from rank {peer[1]} read {heard}"
sent = torch.tensor([100 * rank + j for j in range(world)], dtype=torch.int64, device="cuda")
got_a2a = torch.empty_like(sent)
dist.all_to_all_single(got_a2a, sent)
assert got_a2a.tolist() == [100 * j + rank for j in range(world)], f"all_to_all_single read {got_a2a.tolist()}"
# docs/values.md, "Kernels hysim computes": a histogram of known values is exact, a sum too.
for dtype in (torch.int64, torch.float32):  # an element cast on the GPU would be a kernel's, not known
    idx = torch.tensor([0, 3, 3, 1, 7, 3, 6, 6, 9], dtype=dtype, device="cuda")  # 9: outside [min, max], not counted
    hist = torch.histc(idx, bins=4, min=0, max=8).tolist()
    assert hist == [2, 3, 0, 3], f"histc of known {dtype} read {hist}"
for dtype in (torch.int64, torch.float32):  # an 8- and a 4-byte accumulator
    sums = torch.tensor([5, 6, 7, 8, 9, 10.5], dtype=dtype, device="cuda").view(2, -1).sum(dim=1).tolist()
    assert sums == [18, 27 if dtype == torch.int64 else 27.5], f"sum of known {dtype} read {sums}"
# A mixture of experts' dispatch (TorchTitan's): tokens per expert from a histogram of routing hysim does not
# know (top-k of random scores: kernels), exchanged and summed per rank into the all-to-all's split sizes.
experts, tokens, top_k = 2 * world, 256, 2
choice = torch.topk(torch.randn(tokens, experts, device="cuda"), top_k, dim=1).indices.view(-1)
per_expert = torch.histc(choice, bins=experts, min=0, max=experts)
per_group = torch.empty_like(per_expert)
counts = per_expert.tolist()
dist.all_to_all_single(per_group, per_expert)
send_splits = per_expert.view(world, -1).sum(dim=1).tolist()
recv_splits = per_group.view(world, -1).sum(dim=1).tolist()
assert sum(counts) == tokens * top_k, f"tokens per expert {counts} do not sum to {tokens * top_k}"
assert send_splits == [tokens * top_k // world] * world, f"balanced routing gave {send_splits}"  # h200x8.yaml's
routed = torch.empty(sum(recv_splits), 16, device="cuda")
dist.all_to_all_single(routed, torch.randn(tokens * top_k, 16, device="cuda"), recv_splits, send_splits)
if rank == 0:
    print(f"values: all_reduce MAX {top}, broadcast {got}, all_gather_object {names}, recv {heard}, "
          f"tokens per expert {counts}, split sizes {send_splits}", flush=True)
dist.destroy_process_group()
if rank == 0:
    print("collectives: ok", flush=True)
