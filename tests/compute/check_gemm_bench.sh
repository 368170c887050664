#!/usr/bin/env bash
# Runs examples/gemm_bench (nvcc-built, linked against the real cuBLAS) under
# hysim on one H100 and checks each row's time, measured by the program's own
# CUDA events, against the roofline arithmetic written out here from the
# fitted H100 constants (bridge/compute/gemm_efficiency.h) and the H100 preset (989 BF16,
# 67 FP32 TFLOP/s, 3350 GB/s, 132 SMs), wave-traffic term included
# and the idle-SM and wave-quantization terms (bench/compute/fit_gemm.sh), except the row whose GEMM (type,
# m, n, k, batch) the scenario's profile database holds ("gemm:..." keys), which takes that entry's time; and
# that the run summary counts that GEMM and gemm_bench's own kernel as profile kernels, the rest as roofline.
# The program times back-to-back calls, so each row also holds the scenario's launch gap (compute.kernel_gap_us):
# a profiled row is its entry plus that gap; a roofline row is the fitted time per call less the gap its fit
# held (HS_GEMM_FIT_GAP_US, bridge/compute/gemm_model.h) plus the scenario's.
# usage: check_gemm_bench.sh HYSIM SCENARIO GEMM_BENCH GEMM_EFFICIENCY_H GEMM_MODEL_H
set -euo pipefail
hysim=$1 scenario=$2 bench=$3 consts=$4 model_h=$5
gap=$(sed -n 's/.*kernel_gap_us: *\([0-9.]*\).*/\1/p' "$scenario")
fit_gap=$(awk '$1 == "#define" && $2 == "HS_GEMM_FIT_GAP_US" { print $3 }' "$model_h")
[ -n "$gap" ] && [ -n "$fit_gap" ] || { echo "need compute.kernel_gap_us in $scenario and HS_GEMM_FIT_GAP_US in $model_h"; exit 1; }
iters=3
# the GEMM entries of the database beside the scenario: "dtype m n k batch us" per line
gemms=$(awk -F, '$1 == "NVIDIA H100 80GB HBM3" && $2 ~ /^gemm:/ { sub(/^gemm:/, "", $2); print $2, $3, $4, $5, $6, $10 }' \
  "$(dirname "$scenario")/profiles.csv")
[ "$gap" != "$fit_gap" ] || { echo "the scenario's gap equals the fit's: the check would not see either"; exit 1; }
[ -n "$gemms" ] || { echo "no gemm: entry in $(dirname "$scenario")/profiles.csv"; exit 1; }
out=$("$hysim" run "$scenario" -- "$bench" -m 4096 -n 2048 -k 1024 -b 3 -i $iters 2>&1)
echo "$out"
{ grep '^#define HS_GEMM_' "$consts"; sed 's/^/profiled /' <<<"$gemms"; echo "$out"; } | awk -v iters=$iters -v gap="$gap" -v fit_gap="$fit_gap" '
  $1 == "#define" { c[$2] = $3; next }
  $1 == "profiled" { profiled[$2 " " $3 " " $4 " " $5 " " $6] = $7; next }
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
    want = c["HS_GEMM_H100_T0_US_" T] + b * one - fit_gap + gap
    key = t " " m " " n " " k " " b
    if (key in profiled) {
      # the measured entry, as printed (0.001 us)
      if (++measured > 1) { print "more than one row matches a gemm: entry"; bad++ }
      gemm_us = profiled[key]
      printf "%s %s batch %d: %.3f us, profile %.3f us + gap %.3f us (roofline %.3f us)\n", api, t, b, us, gemm_us, gap, want
      if (us - gemm_us - gap > 0.0015 || gemm_us + gap - us > 0.0015) bad++
      next
    }
    err = us / want - 1
    printf "%s %s batch %d: %.3f us, roofline %.3f us (%+.4f %%)\n", api, t, b, us, want, 100 * err
    if (err > 0.001 || err < -0.001) bad++
  }
  /^hysim: kernel time by source/ {
    src = $0
  }
  END {
    # the scale kernel of gemm_bench (7.25 us) and every call of the profiled GEMM, warm-up included
    prof = sprintf("profile %d kernels %.3f ms", 1 + iters + 1, (7.25 + (iters + 1) * gemm_us) / 1e3)
    if (index(src, prof) == 0) { print "want \"" prof "\""; bad++ }
    if (src !~ ("roofline " 4 * (iters + 1) " kernels")) { print "want " 4 * (iters + 1) " roofline kernels"; bad++ }
    if (src !~ /default 0 kernels/) { print "want no kernel timed by the default"; bad++ }
    if (measured != 1) { print "want one row timed by its gemm: entry, got " measured + 0; bad++ }
    if (rows != 5) { print "expected 5 rows, got " rows + 0; exit 1 }
    if (src == "") { print "no kernel-source line in the summary"; exit 1 }
    if (bad) { print bad " check(s) failed"; exit 1 }
    print "ok"
  }'
