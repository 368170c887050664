"""One small PyTorch CUDA op's host cost two ways, in ns per op (the best of 5 batches of 400, issued back to back):
the host clock (time.perf_counter) and the calling thread's CPU time (time.thread_time_ns). Run for real, both count
the CUDA library's own work in the call; under hysim (host_time real) the clock counts the program's CPU time plus
hysim's charge for each call (interpose/core/api_cost.h), the CPU time the program's and hysim's own. Their
differences give the real launch's cost inside torch (bench/RESULTS.md, "Host time on the real host's own CPU").
usage: python3 bench/real/torch_op_cpu.py"""
import time

import torch

a = torch.ones(16, device="cuda")
x = torch.ones(4, 64, device="cuda")
ops = (("add_ in place (1 kernel)", lambda: a.add_(1.0)), ("to bf16 (1 kernel, new tensor)", lambda: x.to(torch.bfloat16)),
       ("python call of nothing", lambda: None))
print(f"# torch_op_cpu: torch {torch.__version__}, {torch.cuda.get_device_name()}")
for name, fn in ops:
    for _ in range(200):
        fn()
    best = None
    for _ in range(5):
        torch.cuda.synchronize()
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for _ in range(400):
            fn()
        c1, t1 = time.thread_time_ns(), time.perf_counter_ns()
        r = ((t1 - t0) / 400, (c1 - c0) / 400)
        best = r if best is None or r[0] < best[0] else best
    print(f"{name:32s} clock {best[0]:8.0f} ns  thread CPU {best[1]:8.0f} ns")
