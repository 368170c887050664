"""The kernels the training frameworks launch besides a GPT's own (bench/real/torch_ops_sweep.sh profiles this):
torch.cat and split copies (FSDP2's all-gather copy-in and copy-out), the foreach kernels of optimizers and of
gradient clipping, dropout, triangular masks, softmax forward and backward, weight initialisation (uniform, normal,
truncated normal), index gathers, nonzero and masked_select, and the grouped GEMM's set-up of a mixture of experts,
each over sizes from small to 70B-class layers, in bf16 and fp32, a few times each. Indices are drawn at random,
as a mixture of experts' token order or a batch's token ids spread them: a kernel that accumulates into the rows
its indices name (index backward, scatter_add, histc) serializes on a repeated index, and all-equal indices time
it hundreds of times slower than models run it.
usage: python3 bench/real/torch_ops_sweep.py"""
import sys

import torch
import torch.nn.functional as F

dev = torch.device("cuda")
REPEAT = 3
failed = []


def run(name, fn):
    try:
        for _ in range(REPEAT):
            fn()
        torch.cuda.synchronize()
    except Exception as e:  # a case this torch or GPU refuses: named, the rest still run
        failed.append(f"{name}: {type(e).__name__}: {e}"[:200])


def sizes(lo, hi, step=4):
    n = lo
    while n <= hi:
        yield n
        n *= step


for dtype in (torch.bfloat16, torch.float32):
    d = str(dtype).split(".")[1]
    # torch.cat: few to many parts, along the first dimension (contiguous) and the last (strided)
    for parts in (2, 8, 32, 128):
        for total in sizes(1 << 12, 1 << 26, 8):
            n = max(total // parts, 16)
            xs = [torch.empty(n, device=dev, dtype=dtype) for _ in range(parts)]
            run(f"cat {parts}x{n} {d}", lambda: torch.cat(xs))
            ys = [torch.empty(64, max(n // 64, 1), device=dev, dtype=dtype) for _ in range(parts)]
            run(f"cat dim1 {parts}x{n} {d}", lambda: torch.cat(ys, dim=1))
            odd = [torch.empty(n + 3, device=dev, dtype=dtype) for _ in range(parts)]
            run(f"cat odd {parts}x{n + 3} {d}", lambda: torch.cat(odd))
            strided = [torch.empty(2 * n, device=dev, dtype=dtype)[::2] for _ in range(parts)]
            run(f"cat strided {parts}x{n} {d}", lambda: torch.cat(strided))
            heads = [torch.empty(8, max(n // 8, 2), device=dev, dtype=dtype)[:, 1:] for _ in range(parts)]
            run(f"cat last dim of slices {parts}x{n} {d}", lambda: torch.cat(heads, dim=-1))
            flat = torch.empty(n * parts, device=dev, dtype=dtype)
            outs = [torch.empty(n, device=dev, dtype=dtype) for _ in range(parts)]
            run(f"split_with_sizes_copy {parts}x{n} {d}",
                lambda: torch.split_with_sizes_copy(flat, [n] * parts, dim=0, out=outs))
    # foreach: an optimizer's step over tensor lists and gradient clipping's norm
    for count in (4, 32, 256):
        for n in sizes(1 << 10, 1 << 22, 8):
            if count * n > 1 << 27:
                continue
            ps = [torch.nn.Parameter(torch.zeros(n, device=dev, dtype=dtype)) for _ in range(count)]
            for p in ps:
                p.grad = torch.zeros_like(p)
            for impl in ("foreach", "fused"):
                opt = torch.optim.AdamW(ps, lr=1e-3, **{impl: True})
                run(f"adamw {impl} {count}x{n} {d}", opt.step)
            run(f"clip_grad_norm {count}x{n} {d}", lambda: torch.nn.utils.clip_grad_norm_(ps, 1.0))
            gs = [p.grad for p in ps]
            run(f"foreach add/mul/lerp {count}x{n} {d}",
                lambda: (torch._foreach_add_(gs, gs, alpha=0.5), torch._foreach_mul_(gs, 0.9),
                         torch._foreach_lerp_(gs, gs, 0.1), torch._foreach_norm(gs)))
    # elementwise families a GPT of examples/torch lacks
    for n in sizes(1 << 12, 1 << 28, 4):
        x = torch.empty(n, device=dev, dtype=dtype)
        run(f"dropout {n} {d}", lambda: F.dropout(x, 0.1, training=True))
        run(f"uniform/normal {n} {d}", lambda: (x.uniform_(), x.normal_()))
        run(f"trunc_normal {n} {d}", lambda: torch.nn.init.trunc_normal_(x, std=0.02))
        idx = torch.randint(0, n, (min(n, 1 << 20),), device=dev)
        run(f"index {n} {d}", lambda: x[idx])
        run(f"nonzero/masked_select {n} {d}", lambda: (torch.nonzero(x), torch.masked_select(x, x > 0)))
        gi = torch.randint(0, 8, (n // 8, 8), device=dev)
        x2, src = x.view(n // 8, 8), torch.empty(n // 8, 8, device=dev, dtype=dtype)
        run(f"gather/scatter_add {n} {d}", lambda: (torch.gather(x2, 1, gi), x2.scatter_add_(1, gi, src)))
        xg = torch.zeros(n // 64, 64, device=dev, dtype=dtype, requires_grad=True)
        rows = torch.randint(0, n // 64, (min(n // 64, 1 << 16),), device=dev)
        run(f"index backward {n} {d}", lambda: xg[rows].sum().backward())
        bins = torch.randint(0, 64, (min(n, 1 << 20),), device=dev)
        run(f"histc {n}", lambda: torch.histc(bins.float(), bins=64, min=0, max=64))
    for s in (128, 512, 2048, 8192):
        m = torch.empty(s, s, device=dev, dtype=dtype)
        run(f"triu/tril {s} {d}", lambda: (torch.triu(m, 1), torch.tril(m)))
    # softmax over the last dimension, forward and backward (attention's scores, a fused kernel's fallback)
    for last in (64, 256, 1024, 4096):
        for rows in sizes(1 << 8, 1 << 20, 16):
            if rows * last > 1 << 28:
                continue
            x = torch.empty(rows, last, device=dev, dtype=dtype, requires_grad=True)
            g = torch.empty(rows, last, device=dev, dtype=dtype)
            run(f"softmax {rows}x{last} {d}", lambda: torch.softmax(x, -1).backward(g))
# a mixture of experts' grouped GEMM (its set-up kernel, and the GEMM): bf16, experts of 8 to 64
for experts in (8, 16, 64):
    for tokens in (1024, 8192):
        for dim in (256, 1024, 4096):
            a = torch.empty(tokens, dim, device=dev, dtype=torch.bfloat16)
            w = torch.empty(experts, dim, dim, device=dev, dtype=torch.bfloat16).transpose(-2, -1)
            offs = torch.arange(1, experts + 1, device=dev, dtype=torch.int32) * (tokens // experts)
            run(f"grouped_mm {experts}x{tokens}x{dim}", lambda: torch._grouped_mm(a, w, offs=offs))
print(f"torch_ops_sweep: done, {len(failed)} cases refused", flush=True)
for f in failed:
    print(f"  {f}")
sys.exit(0)
