#!/usr/bin/env python3
"""Fit the one-server ring model of all-reduce, all-gather and reduce-scatter on real H200 data, and check it
on data it did not see.

Model (bridge/collectives/collective_tuner.c; docs/nccl.md, "Bus bandwidth and the GPU count"): on
n GPUs of one NVSwitch server, a ring collective of kind k and S bytes (nccl-tests' size convention) takes

    T = 8.4 us + s * 3.4 us + j_k * sqrt(L) + W / (e_k * B) + L / C_k

    W    bytes each GPU sends over NVLink: 2(n-1)/n S all-reduce, (n-1)/n S all-gather and reduce-scatter
    L    bytes each GPU writes within its own memory, in the same thread blocks and between its sends: S/n
         (all-gather's own chunk into the output; reduce-scatter's and all-reduce's reduced chunk)
    B    the scenario's NVLink rate per GPU and direction (3600 Gb/s = 450 GB/s)
    e_k  the fraction of B the kind's copy loop reaches on the wire
    C_k  the rate of the kind's local write (a copy, or a reduction of two inputs into the output)
    j_k  the kind's spread: the collective ends with its last channel, and the channels' finishing times drift
         apart like the square root of the loops each runs, which are L bytes' worth (sqrt(L), full from 64 MiB)
    s    ring steps: 2(n-1) all-reduce, n-1 the others; 8.4 and 3.4 us are NCCL's own Simple base and NVLink
         per-step latencies, which hysim adds as they are (not fitted)

n enters only through W and L: no constant depends on the GPU count. The local write is S/n, its sends
(n-1)/n S (twice for all-reduce): on 2 GPUs a GPU writes locally as much as it sends, on 8 a seventh of it,
which is why bus bandwidth grows with n.

Fitted (each kind alone, least squares of the relative error) on the one-process rows
(examples/collectives_bench, the host's NCCL 2.28.3) of bench/real/data/collectives_h200x2.txt (2 GPUs,
64 MiB - 1 GiB) and bench/real/data/collectives_h200x4.txt (4 GPUs and 2 of them, 64 MiB - 4 GiB).
Checked on (not fitted): the one-process-per-GPU rows of torch.distributed (torch's NCCL 2.28.9) in
collectives_h200x4.txt.
usage: bench/nccl/fit_ring_model.py   (prints the constants and a table of predicted against measured)"""
import math
import os
import re
import sys


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "bench", "real", "data")
B = 450.0  # GB/s: 3600 Gb/s per GPU and direction (tests/e2e/h200x2.yaml, scenarios' NVLink 4)
KINDS = ("allreduce", "allgather", "reducescatter")
MIN_BYTES = 64 << 20


def rows(path, section=None):
    """(source, n, op, S, time_us) of a collectives_bench / torch_collectives file; section: a '## ' heading
    substring whose rows are wanted (None: the whole file, n from the '# collectives_bench: N x' lines)."""
    out, n, take, src = [], None, section is None, "bench"
    for line in open(path):
        if line.startswith("## "):
            take = section is None or section in line
            src = "torch" if "per GPU" in line else "bench"
            continue
        m = re.match(r"# (?:collectives_bench|torch\.distributed): (\d+) x", line)
        if m:
            n = int(m.group(1))
            continue
        f = line.split()
        if take and n and len(f) == 5 and f[0] in KINDS and int(f[1]) >= MIN_BYTES:
            out.append((src, n, f[0], int(f[1]), float(f[2])))
    return out


def work(op, n, S):
    W = (2 if op == "allreduce" else 1) * (n - 1) / n * S
    return W, S / n


BASE_LAT_US, HOP_LAT_US = 8.4, 3.4  # NCCL's Simple baseLat and NVLink hwLat (collective_tuner.c)


def fixed_us(op, n):
    return BASE_LAT_US + (2 if op == "allreduce" else 1) * (n - 1) * HOP_LAT_US


def features(op, n, S):
    """The model less its fixed latencies is linear in (j_k, 1/(e_k B), 1/C_k): T - fixed = features . x."""
    W, L = work(op, n, S)
    return [math.sqrt(L), W, L]


def predict(x, op, n, S):
    return fixed_us(op, n) + sum(f * v for f, v in zip(features(op, n, S), x))


def solve(a, b):
    """Gaussian elimination with partial pivoting: x with a x = b."""
    m = [row[:] + [v] for row, v in zip(a, b)]
    k = len(m)
    for i in range(k):
        p = max(range(i, k), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(k):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    return [m[i][k] / m[i][i] for i in range(k)]


def fit_relative(data, weights):
    """Weighted least squares of the relative error (each row divided by its measured time)."""
    rows_ = [([f / t for f in features(op, n, S)], 1 - fixed_us(op, n) / t, w)
             for (_, n, op, S, t), w in zip(data, weights)]
    k = len(rows_[0][0])
    ata = [[sum(w * r[i] * r[j] for r, _, w in rows_) for j in range(k)] for i in range(k)]
    atb = [sum(w * r[i] * y for r, y, w in rows_) for i in range(k)]
    return solve(ata, atb)


def main():
    x2 = os.path.join(DATA, "collectives_h200x2.txt")
    x4 = os.path.join(DATA, "collectives_h200x4.txt")
    bench = rows(x2) + rows(x4, "one process, ")
    torch = rows(x4, "one process per GPU")
    print(f"{'kind':>13} {'us/√MiB':>9} {'link eff':>9} {'link GB/s':>9} {'local GB/s':>10}  fit (mean, max |err|)"
          "  check: torch (mean, max)")
    table = []
    for op in KINDS:
        fit = [r for r in bench if r[2] == op]
        check = [r for r in torch if r[2] == op]
        x = fit_relative(fit, [1.0] * len(fit))
        stats = []
        for data in (fit, check):
            errs = [predict(x, o, n, S) / t - 1 for _, n, o, S, t in data]
            stats.append((100 * sum(map(abs, errs)) / len(errs), 100 * max(map(abs, errs))))
            table += [(op, src, n, S, t, predict(x, o, n, S)) for (src, n, o, S, t) in data]
        e = 1 / (x[1] * B * 1e3)
        print(f"{op:>13} {x[0] * 1024:>9.2f} {e:>9.4f} {e * B:>9.1f} {1 / (x[2] * 1e3):>10.0f}  "
              f"{stats[0][0]:>5.1f} %, {stats[0][1]:>4.1f} %        {stats[1][0]:>5.1f} %, {stats[1][1]:>4.1f} %")
    print(f"\n{'kind':>13} {'src':>5} {'n':>2} {'size':>11} {'real us':>9} {'model us':>9} {'err':>7}")
    for op, src, n, S, t, m in table:
        print(f"{op:>13} {src:>5} {n:>2} {S:>11} {t:>9.1f} {m:>9.1f} {100 * (m / t - 1):>+6.1f}%")


if __name__ == "__main__":
    sys.exit(main())
