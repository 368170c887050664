#!/bin/sh
# Fits the GEMM efficiency curve of hysim's compute model (bridge/gemm_model.c)
# to real GEMM timings (bench/real/data/gemm_h100.csv, measured by
# bench/real/gemm_grid.py) and prints bridge/gemm_efficiency.h.
#
# Model, per element type d (fp32, fp16, bf16), in cuBLAS's column-major terms
# (the CSV's rows are torch.mm's row-major m x n, which cuBLAS runs as n x m):
#   t_us = t0[d] + flops / (peak[d] * eff[d]) + ab[d] * (m k + k n) s / hbm
#          + c[d] * m n s / hbm + l2[d] * W / hbm
#   flops = 2 m n k, s = element size. The operands A and B are mostly re-read
#   from L2 (small ab); the product C is written to HBM once per GEMM (c).
#   W is the operand traffic of the GPU's waves of 128 x 128 output tiles:
#   the SMs (132) run min(tiles, SMs) tiles at once, laid out
#   min(tiles along n, that) along n by the rest along m; a wave reads its
#   tiles' rows of A and columns of B once, k deep (tiles in one row or column
#   share them in L2): (tiles along m + tiles along n) x 128 x k x s bytes,
#   times tiles / (tiles at once). Long waves along n re-read more of A; the
#   data pick that order (laid along m first, the term gains nothing).
# For each type, coordinate descent over grids of the five constants from
# four starting points keeps most rows within 10 % first, then the smallest
# sum of squared log errors.
#
# Launch-bound rows are left out: gemm_grid.py times back-to-back torch.mm
# calls, so a shape whose GPU time is shorter than the host's launch period
# measures that period. The floor F is the largest time measured for
# 256×256×256 (any type; its GPU work is about 1 µs); rows measured below
# 1.5 F are launch-bound.
#
# usage: bench/compute/fit_gemm.sh [-h] [CSV [BF16_TFLOPS FP32_TFLOPS HBM_GBPS SMS]] > bridge/gemm_efficiency.h
# (defaults: the CSV above and the H100 preset of scenarios/defaults.c: 989, 67, 3350, 132)
#   -h  holdout check instead: per type, fit on alternate GPU-bound rows (1st, 3rd, ...)
#       and print how many of the others the fit predicts within 10 %, and the worst error
set -eu
holdout=0
[ "${1:-}" = -h ] && { holdout=1; shift; }
csv=${1:-$(dirname "$0")/../real/data/gemm_h100.csv}
bf16=${2:-989} fp32=${3:-67} hbm=${4:-3350} sms=${5:-132}
awk -F, -v bf16="$bf16" -v fp32="$fp32" -v hbm="$hbm" -v sms="$sms" -v src="$csv" -v holdout="$holdout" '
  /^#/ || $1 == "dtype" { next }
  { n++; d[n] = $1; m[n] = $3; nn[n] = $2; k[n] = $4; us[n] = $5   # cuBLAS m, n = torch n, m
    if ($2 == 256 && $3 == 256 && $4 == 256 && $5 > floor) floor = $5 }
  function esize(t) { return t == "fp32" ? 4 : 2 }
  function peak(t)  { return (t == "fp32" ? fp32 : bf16) * 1e6 }   # flop per us
  function cdiv(a, b) { return int((a + b - 1) / b) }
  # operand bytes the waves of 128 x 128 tiles read (see above)
  function wave_bytes(M, N, K, s,    tm, tn, tiles, once, along_n, along_m) {
    tm = cdiv(M, 128); tn = cdiv(N, 128); tiles = tm * tn
    once = tiles < sms ? tiles : sms
    along_n = tn < once ? tn : once; along_m = cdiv(once, along_n)
    return (along_m + along_n) * 128 * K * s * tiles / once
  }
  # score of constants P[1..5] on rows R[lo..hi step st]: sets HIT, SQ, WORST
  function score(lo, hi, st,    r, p, q, l) {
    HIT = 0; SQ = 0; WORST = 0
    for (r = lo; r <= hi; r += st) {
      p = P[4] + F[r] / P[1] + (P[2] * AB[r] + P[3] * C[r]) / (hbm * 1e3) + P[5] * W[r] / (hbm * 1e3)
      q = p / U[r]; if (q >= 0.9 && q <= 1.1) HIT++
      l = log(q); SQ += l * l; if ((q > 1 ? q - 1 : 1 - q) > WORST) WORST = (q > 1 ? q - 1 : 1 - q)
    }
  }
  function better(h, sq) { return h > BH || (h == BH && sq < BS) }
  # coordinate descent from four starts; the best constants land in B[1..5]
  function fit(lo, hi, st,    s, i, j, v, improved, save) {
    split("0.75 0.1 0.9 3 0|0.85 0 1 5 0.2|0.9 0 0.5 1 0.5|0.95 0 0.9 3 1", starts, "|")
    first = 1
    for (s = 1; s <= 4; s++) {
      split(starts[s], P, " "); for (i = 1; i <= 5; i++) P[i] += 0
      score(lo, hi, st); BH = HIT; BS = SQ
      improved = 1
      while (improved) {
        improved = 0
        for (i = 1; i <= 5; i++)
          for (j = LO[i]; j <= HI[i]; j++) {
            save = P[i]; P[i] = j / DIV[i]; score(lo, hi, st)
            if (better(HIT, SQ)) { BH = HIT; BS = SQ; improved = 1 } else P[i] = save
          }
      }
      if (first || BH > GH || (BH == GH && BS < GS)) { GH = BH; GS = BS; for (i = 1; i <= 5; i++) B[i] = P[i]; first = 0 }
    }
  }
  END {
    # grids: eff 0.50..0.99, ab 0..2, c 0..3 (steps of 0.05), t0 0..20 us (0.5), l2 0..2 (0.02)
    split("50 0 0 0 0", LO, " "); split("99 40 60 40 100", HI, " "); split("100 20 20 2 50", DIV, " ")
    cut = 1.5 * floor
    ntypes = split("fp32 fp16 bf16", types, " ")
    for (ti = 1; ti <= ntypes; ti++) {
      t = types[ti]; rows = 0
      for (i = 1; i <= n; i++) if (d[i] == t && us[i] >= cut) {
        rows++; s = esize(t); F[rows] = 2 * m[i] * nn[i] * k[i] / peak(t)
        AB[rows] = (m[i] * k[i] + k[i] * nn[i]) * s; C[rows] = m[i] * nn[i] * s
        W[rows] = wave_bytes(m[i], nn[i], k[i], s); U[rows] = us[i]
      }
      if (holdout) {
        fit(1, rows, 2); for (i = 1; i <= 5; i++) P[i] = B[i]; score(2, rows, 2)
        printf "%s: fitted on %d alternate rows, %d of %d others within 10 %%, worst %.1f %%\n",
               t, int((rows + 1) / 2), HIT, int(rows / 2), 100 * WORST
        continue
      }
      fit(1, rows, 1); for (i = 1; i <= 5; i++) { K5[t, i] = B[i]; P[i] = B[i] }
      score(1, rows, 1); HITS[t] = HIT; ROWS[t] = rows; WORSTS[t] = WORST
    }
    if (holdout) exit
    print "/*"
    print " * GEMM efficiency constants of the compute model (bridge/gemm_model.c)."
    print " * Generated by bench/compute/fit_gemm.sh from bench/real/data/gemm_h100.csv,"
    printf " * peaks %g BF16/FP16 and %g FP32 TFLOP/s, %g GB/s HBM, %d SMs; do not edit by hand.\n", bf16, fp32, hbm, sms
    printf " * Rows measured under %.3f us (1.5 x the 256^3 launch floor %.3f us) left out.\n", cut, floor
    for (ti = 1; ti <= ntypes; ti++) { t = types[ti]
      printf " * %s: %d of %d GPU-bound rows within 10 %%, worst %.1f %%\n", t, HITS[t], ROWS[t], 100 * WORSTS[t] }
    print " */"
    print "#ifndef HYSIM_BRIDGE_GEMM_EFFICIENCY_H"
    print "#define HYSIM_BRIDGE_GEMM_EFFICIENCY_H"
    printf "#define HS_GEMM_LAUNCH_FLOOR_US %.3f\n", floor
    print "#define HS_GEMM_TILE 128 /* output tile edge of the wave-traffic term */"
    for (ti = 1; ti <= ntypes; ti++) { t = types[ti]; T = toupper(t)
      printf "#define HS_GEMM_EFF_%s %.2f  /* share of peak FLOP/s */\n", T, K5[t, 1]
      printf "#define HS_GEMM_AB_%s %.2f   /* share of the HBM time of reading A and B once */\n", T, K5[t, 2]
      printf "#define HS_GEMM_C_%s %.2f    /* share of the HBM time of writing C once */\n", T, K5[t, 3]
      printf "#define HS_GEMM_T0_US_%s %.1f /* fixed cost per GEMM */\n", T, K5[t, 4]
      printf "#define HS_GEMM_L2_%s %.2f   /* share of the HBM time of the waves operand reads */\n", T, K5[t, 5] }
    print "#endif"
  }' "$csv"
