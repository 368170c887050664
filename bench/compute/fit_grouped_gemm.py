#!/usr/bin/env python3
"""Fit hysim's grouped-GEMM model (bridge/compute/grouped_gemm_model.c; docs/compute.md, "Grouped GEMMs") on
real torch._grouped_mm timings (bench/real/data/grouped_mm_h200/grouped_mm.csv, bench/real/grouped_mm_sweep.py).

Model: a persistent kernel deals work units to its clusters of CLUSTER_M SMs (both of torch's kernels on Hopper
run clusters of 2 x 1): a unit is the cluster's output tile, CLUSTER_M x TILE_M rows by TILE_N columns. Group g
(M_g x N_g output, K_g deep) has ceil(M_g / (CLUSTER_M TILE_M)) x ceil(N_g / TILE_N) units, each taking
a + b x K_g us (b: its tensor cores' time per unit of depth; a: its epilogue and scheduling). The kernel takes
    T = t0 + the busiest cluster's sum of unit times,
the units dealt in group order round robin to the SMS / CLUSTER_M clusters (unit i to cluster i mod clusters),
as a persistent kernel's static scheduler does. One tile shape and (t0, a, b) per operation kind, fitted by
least squares of the relative error on half the shapes (the even K, N pairs) and checked on the other half.
usage: fit_grouped_gemm.py [CSV]   (prints the constants and the errors)"""
import csv
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CSV = os.path.join(ROOT, "bench", "real", "data", "grouped_mm_h200", "grouped_mm.csv")
SMS = 132
CLUSTER_M = 2


def groups_of(r):
    """Per group (M, N, K) of a row."""
    n, k = int(r["n"]), int(r["k"])
    rows = [int(x) for x in r["sizes"].split(";")]
    if r["op"] == "fwd":
        return [(m, n, k) for m in rows]
    if r["op"] == "dgrad":
        return [(m, k, n) for m in rows]
    return [(k, n, m) for m in rows]  # wgrad: K x N output per group, the tokens as depth


def busiest(gs, tile, x):
    """(units, depth) of the cluster that finishes last: the units, in group order, are dealt round robin, unit i
    to cluster i mod clusters (a persistent kernel's static schedule), each taking a + b x its group's depth."""
    um, un = CLUSTER_M * tile[0], tile[1]
    _, a, b = x
    slots = SMS // CLUSTER_M
    tiles, depth, busy = [0] * slots, [0] * slots, [0.0] * slots
    i = 0
    for m, n, k in gs:
        for _ in range(math.ceil(m / um) * math.ceil(n / un)):
            j = i % slots
            tiles[j] += 1
            depth[j] += k
            busy[j] += a + b * k
            i += 1
    j = max(range(slots), key=lambda s: busy[s])
    return tiles[j], depth[j]


def predict(x, gs, tile):
    tiles, depth = busiest(gs, tile, x)
    return x[0] + x[1] * tiles + x[2] * depth


def fit(rows, tile):
    """Least squares of the relative error; which SM finishes last depends on (a, b), so iterate (a few rounds
    settle)."""
    x = [5.0, 1.0, 0.01]
    for _ in range(10):
        A = []
        for r in rows:
            tiles, depth = busiest(groups_of(r), tile, x)
            A.append([v / float(r["grouped_us"]) for v in (1.0, tiles, depth)])
        ata = [[sum(r[i] * r[j] for r in A) for j in range(3)] for i in range(3)]
        atb = [sum(r[i] for r in A) for i in range(3)]
        x = solve(ata, atb)
    return x


def solve(a, b):
    m = [row[:] + [v] for row, v in zip(a, b)]
    for i in range(len(m)):
        p = max(range(i, len(m)), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(len(m)):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [u - f * v for u, v in zip(m[r], m[i])]
    return [m[i][-1] / m[i][i] for i in range(len(m))]


def stats(x, rows, tile):
    e = [predict(x, groups_of(r), tile) / float(r["grouped_us"]) - 1 for r in rows]
    return 100 * sum(map(abs, e)) / len(e), 100 * max(map(abs, e)), e


def tile_of(r):
    """(schedule, (tile M, tile N)) of the kernel torch ran, as the sweep read its name."""
    schedule, dims = r["kernel"].split()
    m, n, _ = dims.split("x")
    return schedule, (int(m), int(n))


def main():
    rows = list(csv.DictReader(open(sys.argv[1] if len(sys.argv) > 1 else CSV)))
    shapes = sorted({(r["k"], r["n"]) for r in rows}, key=lambda s: (int(s[0]) * int(s[1]), s))
    fitted = {s for i, s in enumerate(shapes) if i % 2 == 0}
    print(f"fit on (K, N) in {sorted(fitted)}; checked on the rest\n")
    print(f"{'schedule':>12} {'tile':>8} {'t0 us':>7} {'a us':>7} {'b ns':>7}   per op: fit (mean, max) | check "
          f"(mean, max) | the dense GEMM of the total, as a model (mean, max)")
    for schedule in sorted({tile_of(r)[0] for r in rows}):
        mine = [r for r in rows if tile_of(r)[0] == schedule]
        tile = tile_of(mine[0])[1]
        train = [r for r in mine if (r["k"], r["n"]) in fitted]
        x = fit(train, tile)
        print(f"{schedule:>12} {tile[0]}x{tile[1]:<4} {x[0]:>7.2f} {x[1]:>7.3f} {x[2] * 1e3:>7.4f}")
        for op in ("fwd", "dgrad", "wgrad"):
            tr = [r for r in train if r["op"] == op]
            te = [r for r in mine if r["op"] == op and (r["k"], r["n"]) not in fitted]
            if not tr or not te:
                continue
            s, c = stats(x, tr, tile), stats(x, te, tile)
            d = [float(r["dense_us"]) / float(r["grouped_us"]) - 1 for r in te]
            print(f"{'':>12} {op:>8} {s[0]:>5.1f} %, {s[1]:>5.1f} % | {c[0]:>5.1f} %, {c[1]:>5.1f} % | "
                  f"{100 * sum(map(abs, d)) / len(d):>4.0f} %, {100 * max(map(abs, d)):>4.0f} %")


if __name__ == "__main__":
    sys.exit(main())
