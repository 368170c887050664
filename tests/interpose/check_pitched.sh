#!/usr/bin/env bash
# bench/interpose/pitched_copies (nvcc, the real headers) under hysim run on a
# scenario with pcie at its defaults and host_time zero: cudaMallocPitch pads
# rows to 512 bytes; a 2D copy of pinned memory takes 4 us + the longer of its
# bytes at pcie.copy_gbps and its rows at 1.4 ns each (3.4 ns for rows under
# 32 bytes written to the GPU); a memset 2.8 us (up to 4 KiB) or 5.5 us, then
# the longer of its bytes at 95 % of the H200's 4800 GB/s and (2D) its rows at
# 0.6 ns; a 1D op has no row floor.
# usage: check_pitched.sh HYSIM SCENARIO PITCHED_COPIES
set -euo pipefail
hysim=$1 scenario=$2 prog=$3
out=$("$hysim" run "$scenario" -- "$prog" 3 2>&1) || { echo "$out"; echo "FAIL: hysim run"; exit 1; }
echo "$out" | awk '
  function near(got, want) { return got - want <= 0.01 && want - got <= 0.01 }
  function max(a, b) { return a > b ? a : b }
  $1 == "pitch" { pitches++; p = int(($2 + 511) / 512) * 512
    if ($3 != p) { print "FAIL: width " $2 ": pitch " $3 ", expected " p; bad++ } }
  $1 == "copy" {
    w = $2; h = $3; bytes = $4; copies++
    t = bytes * 8 / (0.876 * 32 * 16 * 128 / 130) / 1000                 # us at pcie.copy_gbps
    want["h2d_2d"] = 4 + max(t, h * (w < 32 ? 3.4 : 1.4) / 1000); want["h2d_1d"] = 4 + t
    want["d2h_2d"] = 4 + max(t, h * 1.4 / 1000); want["d2h_1d"] = 4 + t
    m = bytes / (0.95 * 4800e3)                                           # us at 95 % of the H200 HBM rate
    f = bytes <= 4096 ? 2.8 : 5.5
    want["memset_2d"] = f + max(m, h * 0.6 / 1000); want["memset_1d"] = f + m
    split("h2d_2d h2d_1d d2h_2d d2h_1d memset_2d memset_1d", col, " ")
    for (i = 1; i <= 6; i++) if (!near($(4 + i), want[col[i]])) {
      printf "FAIL: %s x %s %s: %s us, expected %.2f\n", w, h, col[i], $(4 + i), want[col[i]]; bad++ } }
  $1 == "memset_one" { ones++; want1 = ($2 <= 4096 ? 2.8 : 5.5) + $2 / (0.95 * 4800e3)
    if (!near($3, want1)) { printf "FAIL: memset of %s bytes: %s us, expected %.2f\n", $2, $3, want1; bad++ } }
  END { if (pitches != 11 || copies != 8 || ones != 9) { print "FAIL: " pitches " pitches, " copies " shapes, " ones " memsets"; bad++ }
        if (bad) exit 1; print "ok: " pitches " pitches, " copies " shapes, " ones " memsets" }' || { echo "$out"; exit 1; }
