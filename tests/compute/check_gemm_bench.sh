#!/usr/bin/env bash
# Runs examples/gemm_bench (nvcc-built, linked against the real cuBLAS) under
# hysim on one H100 and checks each row's time, measured by the program's own
# CUDA events, against the roofline arithmetic written out here from the
# fitted H100 constants (bridge/gemm_efficiency.h) and the H100 preset (989 BF16,
# 67 FP32 TFLOP/s, 3350 GB/s, 132 SMs), wave-traffic term included
# and the idle-SM and wave-quantization terms (bench/compute/fit_gemm.sh); and that the run summary counts the GEMMs as
# roofline kernels and gemm_bench's own kernel by the profile database.
# usage: check_gemm_bench.sh HYSIM SCENARIO GEMM_BENCH GEMM_EFFICIENCY_H
set -euo pipefail
hysim=$1 scenario=$2 bench=$3 consts=$4
iters=3
out=$("$hysim" run "$scenario" -- "$bench" -m 4096 -n 2048 -k 1024 -b 3 -i $iters 2>&1)
echo "$out"
{ grep '^#define HS_GEMM_' "$consts"; echo "$out"; } | awk -v iters=$iters '
  $1 == "#define" { c[$2] = $3; next }
  function cdiv(a, b) { return int((a + b - 1) / b) }
  # A and B bytes the waves of TILE x TILE output tiles read on 132 SMs, laid out along n first
  function wave_bytes(m, n, k, s,    T, tm, tn, tiles, once, an, am) {
    T = c["HS_GEMM_TILE"]; tm = cdiv(m, T); tn = cdiv(n, T); tiles = tm * tn
    once = tiles < 132 ? tiles : 132; an = tn < once ? tn : once; am = cdiv(once, an)
    return (am + an) * T * k * s * tiles / once
  }
  # wave quantization: 1 / (useful share of the SM time of the best of three tiles) - 1, from one wave up
  function share(m, n, tm, tn,    tiles) { tiles = cdiv(m, tm) * cdiv(n, tn); return m * n / (cdiv(tiles, 132) * 132 * tm * tn) }
  function waste(m, n,    T, u, v) {
    T = c["HS_GEMM_TILE"]; if (cdiv(m, T) * cdiv(n, T) < 132) return 0
    u = share(m, n, T, T); v = share(m, n, T, 2 * T); if (v > u) u = v
    v = share(m, n, 2 * T, T); if (v > u) u = v
    return 1 / u - 1
  }
  /^cublas/ {
    api = $1; t = $2; m = $3; n = $4; k = $5; b = $6; us = $7; rows++
    T = toupper(t); s = (t == "fp32") ? 4 : 2
    peak = ((t == "fp32") ? 67 : 989) * 1e6; hbm = 3350 * 1e3
    T_ = c["HS_GEMM_TILE"]; tiles = cdiv(m, T_) * cdiv(n, T_) * b; idle = tiles < 132 ? 132 / tiles - 1 : 0
    if (idle > c["HS_GEMM_IDLE_CAP"]) idle = c["HS_GEMM_IDLE_CAP"]
    one = 2 * m * n * k * (1 + c["HS_GEMM_H100_FILL_" T] * idle + c["HS_GEMM_H100_QUANT_" T] * waste(m, n)) \
              / (peak * c["HS_GEMM_H100_EFF_" T]) \
          + c["HS_GEMM_H100_AB_" T] * (m * k + k * n) * s / hbm \
          + c["HS_GEMM_H100_C_" T] * m * n * s / hbm + c["HS_GEMM_H100_L2_" T] * wave_bytes(m, n, k, s) / hbm
    want = c["HS_GEMM_H100_T0_US_" T] + b * one
    err = us / want - 1
    printf "%s %s batch %d: %.3f us, roofline %.3f us (%+.4f %%)\n", api, t, b, us, want, 100 * err
    if (err > 0.001 || err < -0.001) bad++
  }
  /^hysim: kernel time by source/ {
    src = $0
    if (src !~ /profile 1 kernels 0\.007 ms/) { print "want the profile database to time 1 kernel (7.25 us)"; bad++ }
    if (src !~ ("roofline " 5 * (iters + 1) " kernels")) { print "want " 5 * (iters + 1) " roofline kernels"; bad++ }
    if (src !~ /default 0 kernels/) { print "want no kernel timed by the default"; bad++ }
  }
  END {
    if (rows != 5) { print "expected 5 rows, got " rows + 0; exit 1 }
    if (src == "") { print "no kernel-source line in the summary"; exit 1 }
    if (bad) { print bad " check(s) failed"; exit 1 }
    print "ok"
  }'
