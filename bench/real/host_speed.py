"""The host's single-thread speed at what bounds a launch-bound PyTorch step: a pure Python loop and torch's
CPU-side dispatch of a tiny op, in ns per iteration (the median of 7 runs). Run on the real GPU host and on the
machine hysim runs on; their ratio is a host_time scaled:F factor (bench/RESULTS.md, "Host speed").
usage: python3 bench/real/host_speed.py"""
import platform
import statistics
import time

import torch


def per_iter_ns(fn, n):
    best = []
    for _ in range(7):
        t0 = time.perf_counter_ns()
        fn(n)
        best.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(best)


def python_loop(n):
    s = 0
    for i in range(n):
        s += i * 3 % 7
    return s


x = torch.empty(16)


def torch_dispatch(n):
    for _ in range(n):
        x.add_(1.0)


def torch_alloc(n):
    for _ in range(n):
        torch.empty(64).mul_(2.0)


torch.set_num_threads(1)
print(f"# host_speed: {platform.processor() or platform.machine()}, {platform.python_version()}, torch {torch.__version__}")
for name, fn, n in (("python loop", python_loop, 2_000_000), ("torch add_ (CPU, 16 floats)", torch_dispatch, 200_000),
                    ("torch empty+mul_ (CPU, 64 floats)", torch_alloc, 100_000)):
    print(f"{name:36s} {per_iter_ns(fn, n):9.1f} ns per iteration")
