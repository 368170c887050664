#!/usr/bin/env python3
"""torch._grouped_mm on one real GPU over the shapes of mixtures of experts, for hysim's grouped-GEMM model
(docs/compute.md, "Grouped GEMMs"; bench/RESULTS.md "Grouped GEMMs on a real H200").

For G groups (experts), T rows (tokens) in all, split evenly or by Zipf 1.2 (rows per group rounded to 16, as
the experts' token groups are padded), and an expert of K -> N: the three products of an expert layer's step,
  fwd   x[T, K] @ w[G, K, N] -> [T, N]        (torch's M < 0: the rows are per group)
  dgrad g[T, N] @ w[G, N, K] -> [T, K]        (the same kind, transposed weights)
  wgrad x^T[K, T] @ g[T, N] -> [G, K, N]      (torch's K < 0: the reduction is per group)
each timed by its kernel's own GPU time (CUPTI through torch.profiler, the median of R calls; the grouped
GEMM kernel alone, not torch's prepare_grouped_gemm_data before it), beside the dense torch.mm of the same
total (T x K x N, all its kernels) for reference. Prints CSV:
  op,groups,tokens,n,k,split,sizes,grouped_us,dense_us,kernel   (sizes: the groups' tokens, ';' between)
usage: grouped_mm_sweep.py [--quick | --heldout]"""
import re
import sys

import torch

REPEAT = 20
EXPERT_SHAPES = [(256, 512), (512, 256), (2048, 1408), (1408, 2048), (4096, 1536), (1536, 4096),
                 (7168, 2048), (2048, 7168)]  # (K, N): TorchTitan's debug model to DeepSeek-V3's experts
GROUPS = [8, 16, 64]
TOKENS = [2048, 8192, 32768, 65536]
# --heldout: what the fit never saw, DeepSeek-V3's 256 experts (and 128) on one GPU
HELDOUT = ([(7168, 2048), (2048, 7168)], [128, 256], [16384, 65536])
ALIGN = 16


def split(tokens, groups, how):
    """Rows per group, multiples of ALIGN summing to tokens."""
    units = tokens // ALIGN
    if how == "even":
        w = [1.0] * groups
    else:  # zipf 1.2 over the groups in a fixed shuffled order
        w = [1.0 / (r + 1) ** 1.2 for r in range(groups)]
        g = torch.Generator().manual_seed(groups)
        w = [w[i] for i in torch.randperm(groups, generator=g).tolist()]
    s = sum(w)
    rows = [int(units * x / s) for x in w]
    rows[max(range(groups), key=lambda i: w[i])] += units - sum(rows)
    return [r * ALIGN for r in rows]


def kernel_us(fn, grouped):
    """The GPU's own time per call (CUPTI, through torch.profiler: the host's dispatch, which bounds small calls
    timed by events, left out): the grouped GEMM kernel's median (grouped) or all of a call's kernels."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(REPEAT):
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if grouped:
        mine = [e for e in kernels if "GroupProblemShape" in e.name]
        times = sorted(e.time_range.elapsed_us() for e in mine)
        if len(times) != REPEAT:
            sys.exit(f"grouped_mm_sweep.py: {len(times)} grouped GEMM kernels in {REPEAT} calls")
        return times[len(times) // 2], config(mine[0].name)
    return sum(e.time_range.elapsed_us() for e in kernels) / REPEAT


def config(name):
    """The kernel's schedule and tile (M x N x K) as its mangled name spells them: the schedule's tag, then the
    tile's three integers (e.g. ...CooperativeEEENSA_IJNSG_ILi128EEENSG_ILi256EEENSG_ILi64EEE...)."""
    m = re.search(r"KernelPtrArrayTmaWarpSpecialized(Cooperative|Pingpong)(.*)", name)
    tile = re.findall(r"ILi(\d+)E", m.group(2))[:3] if m else []
    return f"{m.group(1)} {'x'.join(tile)}" if len(tile) == 3 else "unknown"


def main():
    quick = "--quick" in sys.argv
    dev, bf = "cuda", torch.bfloat16
    print("op,groups,tokens,n,k,split,sizes,grouped_us,dense_us,kernel")
    shapes, group_counts, token_counts = EXPERT_SHAPES, GROUPS, TOKENS
    if quick:
        shapes, group_counts, token_counts = EXPERT_SHAPES[:2], [8], [2048]
    elif "--heldout" in sys.argv:
        shapes, group_counts, token_counts = HELDOUT
    for k, n in shapes:
        for groups in group_counts:
            for tokens in token_counts:
                x = torch.randn(tokens, k, device=dev, dtype=bf)
                gout = torch.randn(tokens, n, device=dev, dtype=bf)
                w = torch.randn(groups, n, k, device=dev, dtype=bf)  # as nn weights: [G, out, in]
                wt = w.transpose(-2, -1)  # [G, K, N], the view TorchTitan passes
                dense_w = torch.randn(k, n, device=dev, dtype=bf)
                dense = {"fwd": lambda: torch.mm(x, dense_w), "dgrad": lambda: torch.mm(gout, dense_w.t()),
                         "wgrad": lambda: torch.mm(x.t(), gout)}
                for how in ("even", "zipf"):
                    rows = split(tokens, groups, how)
                    offs = torch.tensor(rows, device=dev).cumsum(0).to(torch.int32)
                    ops = {"fwd": lambda: torch._grouped_mm(x, wt, offs=offs),
                           "dgrad": lambda: torch._grouped_mm(gout, w, offs=offs),
                           "wgrad": lambda: torch._grouped_mm(x.t(), gout, offs=offs)}
                    for op, fn in ops.items():
                        us, kernel = kernel_us(fn, True)
                        print(f"{op},{groups},{tokens},{n},{k},{how},{';'.join(map(str, rows))},{us:.2f},"
                              f"{kernel_us(dense[op], False):.2f},{kernel}", flush=True)


if __name__ == "__main__":
    main()
