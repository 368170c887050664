#!/bin/sh
# Fits the GEMM efficiency curve of hysim's compute model (bridge/compute/gemm_model.c)
# to real GEMM timings of one GPU (bench/real/data/gemm_<gpu>.csv, the powers
# of two 256..16384; gemm_<gpu>_offgrid.csv, sizes between them; and
# gemm_<gpu>_offgrid_d.csv, sizes whose rows are not 16-byte aligned; all
# measured by bench/real/gemm_grid.py) and prints its constants; without
# arguments it fits every measured GPU (H100 and H200) and prints
# bridge/compute/gemm_efficiency.h. Fitted on the powers of two alone, the curve
# missed 10 % on a third of the shapes between them (1000, 1536, 3072, ...):
# it had learnt the grid, not the GPU.
#
# Model, per GPU and element type d (fp32, tf32, fp16, bf16), in cuBLAS's
# column-major terms (the CSV's rows are torch.mm's row-major m x n, which
# cuBLAS runs as n x m):
#   t_us = t0[d] + flops (1 + fill[d] * idle + quant[d] * waste) / (peak[d] * e) + ab[d] * (m k + k n) s / hbm
#          + c[d] * m n s / hbm + l2[d] * W / hbm
#   flops = 2 m n k, s = element size (tf32: 4 bytes at half the BF16 peak).
#   e, the share of peak, is eff[d] when the rows of m and of k elements are
#   16-byte aligned (the largest power of two dividing m s and k s is 16 or
#   more), else eff_align8[d] (aligned to 4 or 8 bytes) or eff_align2[d] (1
#   or 2 bytes): without 16-byte rows cuBLAS cannot use its sm90 (TMA)
#   kernels and runs sm80 (align 4/8) or sm75 (align 1/2) cutlass kernels,
#   measured at 16 % and 10 % of peak for bf16 (the kernels column of
#   gemm_<gpu>_offgrid_d.csv). m and k are the leading dimensions of A, B
#   and C of the measured products (packed, not transposed: lda = ldc = m,
#   ldb = k); bridge/compute/gemm_model.c takes a call's own lda, ldb, ldc.
#   The operands A and B are mostly re-read from L2 (small ab); the product C
#   is written to HBM once per GEMM (c).
#   W is the operand traffic of the GPU's waves of 128 x 128 output tiles:
#   the SMs (132) run min(tiles, SMs) tiles at once, laid out
#   min(tiles along n, that) along n by the rest along m; a wave reads its
#   tiles' rows of A and columns of B once, k deep (tiles in one row or column
#   share them in L2): (tiles along m + tiles along n) x 128 x k x s bytes,
#   times tiles / (tiles at once). Long waves along n re-read more of A; the
#   data pick that order (laid along m first, the term gains nothing).
#   idle = max(0, SMs / tiles - 1): with fewer 128 x 128 output tiles than
#   SMs, the SMs without one would idle; cuBLAS splits k to use them (split-k,
#   with a second kernel that adds the partial products), which recovers
#   most but not all of that time: fill is the share it does not. idle is
#   capped at 5 (a product of fewer than 132 / 6 = 22 tiles is split at
#   least enough to keep 22 SMs busy): uncapped, a 256 x 256 x 16384 product
#   (4 tiles) was charged 4 x its FLOP time; caps of 1 to 8 were tried, 5 fits best.
#   waste = 1 / u - 1 (0 below one wave of 128 x 128 tiles, where idle
#   applies): the wave quantization. The last wave of tiles leaves SMs idle,
#   and tiles that overhang m or n compute padding; u is the useful share of
#   the SM time, m n / (waves x SMs x tile area) with waves = ceil(tiles /
#   SMs), for the best of the tiles 128 x 128, 128 x 256 and 256 x 128 (a
#   heuristic like cuBLAS's picks the one that wastes least). Powers of two
#   almost never waste (256 tiles are 1.94 waves), so only the off-grid shapes
#   (3072^2: 2.2 waves at best) fit it: it lifted the rows within 10 % of a
#   second off-grid set, fitted on neither, from 66-70 % to 73-79 %.
# For each type, coordinate descent over grids of the seven constants from
# six starting points keeps most rows within 10 % first (a launch-bound row
# predicted above what was measured + 15 % counts against that), then the
# smallest sum of squared log errors.
#
# Launch-bound rows are left out: gemm_grid.py times back-to-back torch.mm
# calls, so a shape whose GPU time is shorter than the host's launch period
# measures that period. The floor F is the largest time measured for
# 256×256×256 (any type; its GPU work is about 1 µs); rows measured below
# 1.5 F are launch-bound.
#
# usage: bench/compute/fit_gemm.sh [-h] > bridge/compute/gemm_efficiency.h
#        bench/compute/fit_gemm.sh [-h] GPU CSV[,CSV...] BF16_TFLOPS FP32_TFLOPS HBM_GBPS SMS   (one GPU's block;
#        the first CSV is the powers-of-two grid, which holds the 256^3 row)
#   -h  holdout check instead: per type, fit on alternate GPU-bound rows (1st, 3rd, ...)
#       and print how many of the others the fit predicts within 10 %, and the worst error
# The presets are scenarios/defaults.c's: H100 989, 67, 3350 GB/s, 132 SMs; H200 989, 67, 4800, 132.
set -eu
holdout=0 idle_cap=5
[ "${1:-}" = -h ] && { holdout=1; shift; }
data=$(dirname "$0")/../real/data
if [ $# -eq 0 ]; then
  self=$0
  [ "$holdout" = 1 ] && { "$self" -h H100 "$data/gemm_h100.csv,$data/gemm_h100_offgrid.csv,$data/gemm_h100_offgrid_d.csv" 989 67 3350 132
                          "$self" -h H200 "$data/gemm_h200.csv,$data/gemm_h200_offgrid.csv,$data/gemm_h200_offgrid_d.csv" 989 67 4800 132; exit; }
  echo "/*"
  echo " * GEMM efficiency constants of the compute model (bridge/compute/gemm_model.c), one"
  echo " * set per measured GPU. Generated by bench/compute/fit_gemm.sh from"
  echo " * bench/real/data/gemm_h{100,200}.csv and gemm_h{100,200}_offgrid.csv; do not edit by hand."
  echo " */"
  echo "#ifndef HYSIM_BRIDGE_GEMM_EFFICIENCY_H"
  echo "#define HYSIM_BRIDGE_GEMM_EFFICIENCY_H"
  echo "#define HS_GEMM_TILE 128 /* output tile edge of the wave-traffic and idle-SM terms */"
  echo "#define HS_GEMM_IDLE_CAP $idle_cap /* most idle SMs per tile charged */"
  "$self" H100 "$data/gemm_h100.csv,$data/gemm_h100_offgrid.csv,$data/gemm_h100_offgrid_d.csv" 989 67 3350 132
  "$self" H200 "$data/gemm_h200.csv,$data/gemm_h200_offgrid.csv,$data/gemm_h200_offgrid_d.csv" 989 67 4800 132
  echo "#endif"
  exit
fi
[ $# -eq 6 ] || { echo "usage: $0 [-h] [GPU CSV BF16_TFLOPS FP32_TFLOPS HBM_GBPS SMS]" >&2; exit 2; }
gpu=$1 csvs=$2 bf16=$3 fp32=$4 hbm=$5 sms=$6
csv=${csvs%%,*}   # the powers-of-two grid
# t0, the fixed cost of a GEMM in a back-to-back sequence, cannot exceed the
# GPU time of the fastest GEMM plus the gap between two kernels: per type, the
# shortest CUPTI kernel time of the same GPU's kernel-times grid
# (gemm_grid.py --kernel-times, mean of its two passes) plus the median of
# (event time per product - kernel time) over its rows of 20..200 us
ktimes=${csv%.csv}_kernel_times.csv
[ -f "$ktimes" ] || ktimes=$(dirname "$csv")/gemm_$(echo "$gpu" | tr 'A-Z' 'a-z')_kernel_times.csv
t0max=$( [ -f "$ktimes" ] && awk -F, '/^#/ || $1 == "dtype" { next }
  { v = ($5 + $7) / 2; if (!($1 in mn) || v < mn[$1]) mn[$1] = v
    if ($5 >= 20 && $5 <= 200) gap[++ng] = $8 - $5 }
  END { # median gap, by insertion sort (a few hundred rows)
    for (i = 2; i <= ng; i++) { x = gap[i]; for (j = i - 1; j >= 1 && gap[j] > x; j--) gap[j + 1] = gap[j]; gap[j + 1] = x }
    g = ng ? gap[int((ng + 1) / 2)] : 0
    for (t in mn) { printf "%s%s=%.3f", sep, t, mn[t] + g; sep = " " } }' "$ktimes" )
awk -F, -v IDLE_CAP="$idle_cap" -v t0max="$t0max" -v gpu="$gpu" -v bf16="$bf16" -v fp32="$fp32" -v hbm="$hbm" -v sms="$sms" -v src="$csvs" -v holdout="$holdout" '
  /^#/ || $1 == "dtype" { next }
  { n++; d[n] = $1; m[n] = $3; nn[n] = $2; k[n] = $4; us[n] = $5   # cuBLAS m, n = torch n, m
    if ($2 == 256 && $3 == 256 && $4 == 256 && $5 > floor) floor = $5 }
  function esize(t) { return t == "fp32" || t == "tf32" ? 4 : 2 }
  function peak(t)  { return (t == "fp32" ? fp32 : t == "tf32" ? bf16 / 2 : bf16) * 1e6 }   # flop per us
  function cdiv(a, b) { return int((a + b - 1) / b) }
  # operand bytes the waves of 128 x 128 tiles read (see above)
  function wave_bytes(M, N, K, s,    tm, tn, tiles, once, along_n, along_m) {
    tm = cdiv(M, 128); tn = cdiv(N, 128); tiles = tm * tn
    once = tiles < sms ? tiles : sms
    along_n = tn < once ? tn : once; along_m = cdiv(once, along_n)
    return (along_m + along_n) * 128 * K * s * tiles / once
  }
  # SMs left without a 128 x 128 output tile, per tile: max(0, SMs / tiles - 1), at most IDLE_CAP
  function idle(M, N,    tiles, v) {
    tiles = cdiv(M, 128) * cdiv(N, 128); v = tiles < sms ? sms / tiles - 1 : 0; return v > IDLE_CAP ? IDLE_CAP : v
  }
  # the useful share of the SM time of waves of a TM x TN output tile
  function used_share(M, N, TM, TN,    tiles) {
    tiles = cdiv(M, TM) * cdiv(N, TN); return M * N / (cdiv(tiles, sms) * sms * TM * TN)
  }
  # the alignment of rows of x elements of s bytes: the largest power of two dividing x s, at most 16 bytes
  function aligned(x, s,    a) { a = 1; while (a < 16 && (x * s) % (2 * a) == 0) a *= 2; return a }
  # wave quantization: 1 / (the best useful share) - 1, from one wave of 128 x 128 tiles up
  function waste(M, N,    u, v) {
    if (cdiv(M, 128) * cdiv(N, 128) < sms) return 0
    u = used_share(M, N, 128, 128); v = used_share(M, N, 128, 256); if (v > u) u = v
    v = used_share(M, N, 256, 128); if (v > u) u = v
    return 1 / u - 1
  }
  # the features of a row, under key r: GPU-bound rows 1..rows, launch-bound ones "L1".."L" NLB
  function features(r, i, s) {
    F[r] = 2 * m[i] * nn[i] * k[i] / peak(d[i]); FL[r] = F[r] * idle(m[i], nn[i]); FQ[r] = F[r] * waste(m[i], nn[i])
    A = aligned(m[i], s); if (aligned(k[i], s) < A) A = aligned(k[i], s)
    EFF[r] = A >= 16 ? 1 : A >= 4 ? 8 : 9   # which constant is the share of peak
    AB[r] = (m[i] * k[i] + k[i] * nn[i]) * s; C[r] = m[i] * nn[i] * s
    W[r] = wave_bytes(m[i], nn[i], k[i], s); U[r] = us[i]
  }
  # the time the model predicts for row r with constants P[1..NP]
  function predict(r) {
    return P[4] + (F[r] + P[6] * FL[r] + P[7] * FQ[r]) / P[EFF[r]] + (P[2] * AB[r] + P[3] * C[r]) / (hbm * 1e3) + P[5] * W[r] / (hbm * 1e3)
  }
  # score of constants P[1..NP] on rows R[lo..hi step st]: sets HIT, SQ, WORST
  function score(lo, hi, st,    r, q, l) {
    HIT = 0; SQ = 0; WORST = 0
    for (r = lo; r <= hi; r += st) {
      q = predict(r) / U[r]; if (q >= 0.9 && q <= 1.1) HIT++
      l = log(q); SQ += l * l; if ((q > 1 ? q - 1 : 1 - q) > WORST) WORST = (q > 1 ? q - 1 : 1 - q)
    }
    for (r = 1; r <= NLB; r++)   # a launch-bound row counts as a miss only if predicted above it + 15 %
      if (predict("L" r) > 1.15 * U["L" r]) HIT--
  }
  function better(h, sq) { return h > BH || (h == BH && sq < BS) }
  # coordinate descent from every start; the best constants land in B[1..NP]
  function fit(lo, hi, st,    s, i, j, v, improved, save) {
    nstarts = split("0.75 0.1 0.9 3 0 0 0 0.2 0.1|0.85 0 1 5 0.2 0 0.2 0.2 0.1|0.9 0 0.5 1 0.5 0 0 0.5 0.5|0.95 0 0.9 3 1 0 1 0.2 0.1|0.8 0 0.8 3 0.1 0.3 0.1 0.8 0.8|0.74 0.25 1.1 3.5 0.04 0 0 0.2 0.1", starts, "|")
    first = 1
    for (s = 1; s <= nstarts; s++) {
      split(starts[s], P, " "); for (i = 1; i <= NP; i++) { P[i] += 0; if (P[i] > HI[i] / DIV[i]) P[i] = HI[i] / DIV[i] }
      score(lo, hi, st); BH = HIT; BS = SQ
      improved = 1
      while (improved) {
        improved = 0
        for (i = 1; i <= NP; i++)
          for (j = LO[i]; j <= HI[i]; j++) {
            save = P[i]; P[i] = j / DIV[i]; score(lo, hi, st)
            if (better(HIT, SQ)) { BH = HIT; BS = SQ; improved = 1 } else P[i] = save
          }
      }
      if (first || BH > GH || (BH == GH && BS < GS)) { GH = BH; GS = BS; for (i = 1; i <= NP; i++) B[i] = P[i]; first = 0 }
    }
  }
  END {
    # grids: eff 0.50..0.99, ab 0..2, c 0..3 (steps of 0.05), t0 0..20 us (0.5), l2 0..2 (0.02), fill 0..1 (0.02),
    # quant 0..1.5 (0.025), the shares of peak of rows aligned to 4-8 and to 1-2 bytes 0.02..0.99 (0.01)
    NP = 9
    split("50 0 0 0 0 0 0 2 2", LO, " "); split("99 40 60 40 100 50 60 99 99", HI, " "); split("100 20 20 2 50 50 40 100 100", DIV, " ")
    nt0 = split(t0max, kv, " "); for (i = 1; i <= nt0; i++) { split(kv[i], p2, "="); T0MAX[p2[1]] = p2[2] }
    cut = 1.5 * floor
    ntypes = split("fp32 tf32 fp16 bf16", types, " ")
    for (ti = 1; ti <= ntypes; ti++) {
      t = types[ti]; rows = 0; NLB = 0
      for (i = 1; i <= n; i++) if (d[i] == t)   # launch-bound: the GPU part must not exceed it much (see score)
        features((us[i] < cut) ? "L" (++NLB) : ++rows, i, esize(t))
      if (!rows) continue   # not measured on this GPU: the model borrows the curve of another type
      HI[4] = 40; if (t in T0MAX) HI[4] = int(2 * T0MAX[t])   # t0 in steps of 0.5 us
      MEASURED[t] = 1
      if (holdout) {
        fit(1, rows, 2); for (i = 1; i <= NP; i++) P[i] = B[i]; score(2, rows, 2)
        printf "%s %s: fitted on %d alternate rows, %d of %d others within 10 %%, worst %.1f %%\n",
               gpu, t, int((rows + 1) / 2), HIT, int(rows / 2), 100 * WORST
        continue
      }
      fit(1, rows, 1); for (i = 1; i <= NP; i++) { FITTED[t, i] = B[i]; P[i] = B[i] }
      for (r = 1; r <= rows; r++) USES[t, EFF[r]] = 1
      for (i = 8; i <= 9; i++) if (!USES[t, i]) FITTED[t, i] = FITTED[t, 1]   # no such row: as if aligned
      score(1, rows, 1); HITS[t] = HIT; ROWS[t] = rows; WORSTS[t] = WORST
    }
    if (holdout) exit
    gsub(/[^,]*\/real\/data\//, "bench/real/data/", src); gsub(/,/, " and ", src)
    printf "/* %s: fitted on %s, peaks %g BF16/FP16 (TF32 half) and %g FP32 TFLOP/s, %g GB/s HBM, %d SMs.\n", gpu, src, bf16, fp32, hbm, sms
    printf " * Rows measured under %.3f us (1.5 x the 256^3 launch floor %.3f us) left out.\n", cut, floor
    if (nt0) printf " * t0 at most the shortest kernel time of the type + the median kernel gap (%s).\n", t0max
    for (ti = 1; ti <= ntypes; ti++) { t = types[ti]; if (!MEASURED[t]) continue
      printf " * %s: %d of %d GPU-bound rows within 10 %%, worst %.1f %%\n", t, HITS[t], ROWS[t], 100 * WORSTS[t] }
    print " */"
    G = "HS_GEMM_" gpu "_"
    printf "#define %sLAUNCH_FLOOR_US %.3f\n", G, floor
    for (ti = 1; ti <= ntypes; ti++) { t = types[ti]; T = toupper(t); if (!MEASURED[t]) continue
      printf "#define %sEFF_%s %.2f  /* share of peak FLOP/s */\n", G, T, FITTED[t, 1]
      printf "#define %sAB_%s %.2f   /* share of the HBM time of reading A and B once */\n", G, T, FITTED[t, 2]
      printf "#define %sC_%s %.2f    /* share of the HBM time of writing C once */\n", G, T, FITTED[t, 3]
      printf "#define %sT0_US_%s %.1f /* fixed cost per GEMM */\n", G, T, FITTED[t, 4]
      printf "#define %sL2_%s %.2f   /* share of the HBM time of the waves operand reads */\n", G, T, FITTED[t, 5]
      printf "#define %sFILL_%s %.2f /* share of the idle SMs time charged when tiles < SMs */\n", G, T, FITTED[t, 6]
      printf "#define %sQUANT_%s %.3f /* share of the last wave and padding waste charged */\n", G, T, FITTED[t, 7]
      printf "#define %sEFF_ALIGN8_%s %.2f /* share of peak FLOP/s, rows aligned to 4 or 8 bytes */\n", G, T, FITTED[t, 8]
      printf "#define %sEFF_ALIGN2_%s %.2f /* share of peak FLOP/s, rows aligned to 1 or 2 bytes */\n", G, T, FITTED[t, 9] }
  }' $(echo "$csvs" | tr , ' ')
