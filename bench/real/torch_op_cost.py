"""What one small PyTorch CUDA op costs the host, in ns of its clock per op issued (the median of 7 batches of
N ops, fewer than a stream holds before a launch blocks, timed to the last op's return, not to the GPU's end): run for
real on a GPU host and under hysim (host_time real) on the same host, the difference is what hysim's host clock
misses or adds per op of each kind (bench/RESULTS.md, "Host time on the real host's own CPU"). The tensors are
tiny, so the GPU keeps up and the host sets the pace. Under hysim, time.perf_counter reads simulated time.
usage: python3 bench/real/torch_op_cost.py [N]"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
dev = torch.device("cuda")
a = torch.ones(16, device=dev)
b = torch.ones(16, device=dev)
x = torch.ones(4, 64, device=dev)
w = torch.ones(64, device=dev)
h = torch.ones(32, 32, device=dev, dtype=torch.bfloat16)
parts = [torch.ones(16, device=dev) for _ in range(8)]
big = torch.ones(1 << 16, device=dev)

ops = {
    "add_ in place (1 kernel)": lambda: a.add_(1.0),
    "add, new tensor (1 kernel)": lambda: torch.add(a, b),
    "sum (1 reduction)": lambda: a.sum(),
    "layer_norm (1 kernel)": lambda: F.layer_norm(x, (64,), w, w),
    "softmax (1 kernel)": lambda: torch.softmax(x, -1),
    "mm bf16 32^3 (cuBLASLt)": lambda: h @ h,
    "cat of 8 (1 kernel)": lambda: torch.cat(parts),
    "to bf16 (1 kernel)": lambda: x.to(torch.bfloat16),
    "index_select (1 kernel)": lambda: big.index_select(0, a.long()),
    "python call of nothing": lambda: None,
}


def per_op_ns(fn):
    runs = []
    for _ in range(7):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(runs)


for fn in ops.values():  # warm every path (kernel loading, the allocator's pools)
    for _ in range(50):
        fn()
torch.set_num_threads(1)
print(f"# torch_op_cost: torch {torch.__version__}, {torch.cuda.get_device_name()}, {n} ops a batch")
for name, fn in ops.items():
    print(f"{name:30s} {per_op_ns(fn):9.0f} ns per op")
