"""torch._grouped_mm under hysim: a mixture of experts' grouped GEMMs timed by their groups' products
(docs/compute.md, "Grouped GEMMs"), against the real H200's figures of the same products
(bench/real/data/grouped_mm_h200/grouped_mm.csv); and torch.cumsum of known integers computed.

usage: python grouped_mm.py   (under hysim, an H200 scenario with host_time: zero)
Prints one line per check and "grouped mm: ok" at the end; exits 1 on the first failure.
"""
import sys

import torch

BF = torch.bfloat16
ZIPF_8 = [5312, 2704, 3264, 2304, 7504, 12224, 4064, 28160]  # grouped_mm_sweep.py's Zipf 1.2 split of 65536


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        sys.exit(1)


def gpu_us(fn):
    """Simulated GPU time of one call, by CUDA events."""
    fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3


def near(got, real, tol, what):
    check(abs(got / real - 1) <= tol, f"{what}: {got:.1f} us, real H200 {real:.1f} us (within {tol:.0%})")


# an expert layer's forward, 8 experts of 2048 -> 1408, 65536 tokens split evenly (real: 575.13 us)
tokens, k, n = 65536, 2048, 1408
x = torch.randn(tokens, k, device="cuda", dtype=BF)
w = torch.randn(8, n, k, device="cuda", dtype=BF)
offs_even = torch.arange(1, 9, device="cuda", dtype=torch.int32) * (tokens // 8)
near(gpu_us(lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs_even)), 575.13, 0.15, "forward, 8 even groups")
small = x[:2048]
offs_small = torch.arange(1, 9, device="cuda", dtype=torch.int32) * 256
near(gpu_us(lambda: torch._grouped_mm(small, w.transpose(-2, -1), offs=offs_small)), 28.22, 0.25,
     "forward, 2048 tokens (the size, not the kernel's name, sets the time)")

# the weight gradient, 8 experts of 256 -> 512: each group's depth is its tokens, so skew serializes it; its
# offsets from torch.cumsum of known integers (cub's scan, which hysim computes)
xt = torch.randn(256, tokens, device="cuda", dtype=BF)
g = torch.randn(tokens, 512, device="cuda", dtype=BF)
offs_zipf = torch.tensor(ZIPF_8, dtype=torch.int32, device="cuda").cumsum(0, dtype=torch.int32)
even = gpu_us(lambda: torch._grouped_mm(xt, g, offs=offs_even))
skewed = gpu_us(lambda: torch._grouped_mm(xt, g, offs=offs_zipf))
near(even, 81.50, 0.25, "weight gradient, even groups")
near(skewed, 258.14, 0.25, "weight gradient, Zipf 1.2 groups (offsets from the computed cumsum)")
check(skewed > 2 * even, f"skewed groups take longer: {skewed:.1f} vs {even:.1f} us")
want = [sum(ZIPF_8[: i + 1]) for i in range(8)]
check(offs_zipf.cpu().tolist() == want, f"cumsum of known integers computed: {offs_zipf.cpu().tolist()}")

# offsets hysim cannot know (an elementwise kernel made them): the total split evenly
offs_unknown = offs_zipf * 1
unknown = gpu_us(lambda: torch._grouped_mm(xt, g, offs=offs_unknown))
check(abs(unknown / even - 1) < 0.01, f"unknown offsets: an even split ({unknown:.1f} vs {even:.1f} us)")
print("grouped mm: ok")
