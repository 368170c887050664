"""torch.distributed.pipelining under torchrun: a stack of linear layers split into one stage
per rank (pipeline() tracing the model at split points), GPipe with 4 micro-batches, one step
forward and backward. Prints each rank's step time and "pipeline: ok" on the last rank.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.pipelining import ScheduleGPipe, SplitPoint, pipeline

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dev = torch.device("cuda")


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(2048, 2048) for _ in range(4 * world))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


model = Stack()
micro = torch.zeros(8, 2048)
split = {f"layers.{4 * i}": SplitPoint.BEGINNING for i in range(1, world)}
pipe = pipeline(model, mb_args=(micro,), split_spec=split)
stage = pipe.build_stage(rank, dev)
schedule = ScheduleGPipe(stage, n_microbatches=4, loss_fn=lambda y, t: y.sum())
x = torch.zeros(32, 2048, device=dev)
for step in range(2):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    if rank == 0:
        schedule.step(x)
    elif rank == world - 1:
        schedule.step(target=torch.zeros(32, 2048, device=dev), losses=[])
    else:
        schedule.step()
    end.record()
    torch.cuda.synchronize()
    print(f"rank {rank} step {step}: {start.elapsed_time(end):.3f} ms", flush=True)
dist.destroy_process_group()
if rank == world - 1:
    print("pipeline: ok", flush=True)
