#!/usr/bin/env bash
# bench/interpose/curand_gen (nvcc, -lcurand: hysim's libcurand.so.10 at run
# time) under hysim run against a real GPU's run of the same program
# (bench/real/data/curand_gen_h100.txt or _h200.txt, on a scenario of that
# GPU), whose 2^24 and 2^28 medians that GPU's cost table in
# interpose/curand/curand.c was fitted on: those rows within 2 % for
# every generator and distribution (the table as measured, each row where it
# belongs), a new generator's first generation within 30 % (its states'
# set-up, one figure per generator).
# usage: check_curand_gen.sh HYSIM SCENARIO CURAND_GEN REAL
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 real=$4
out=$("$hysim" run "$scenario" -- "$prog" 3 2>&1) || { echo "$out"; echo "FAIL: hysim run"; exit 1; }
awk 'NR == FNR { if (NF == 5 && $3 ~ /^[0-9]+$/) { first[$1, $2, $3] = $4; median[$1, $2, $3] = $5 }; next }
  NF == 5 && $3 ~ /^[0-9]+$/ && $3 >= 16777216 {
    rows++; k = $1 SUBSEP $2 SUBSEP $3
    if (!(k in median)) { print "FAIL: " $1 " " $2 " " $3 ": no real figure"; bad++; next }
    e = $5 / median[k] - 1; f = $4 / first[k] - 1
    if (e > 0.02 || e < -0.02) { printf "FAIL: %s %s %s: median %s us, real %s\n", $1, $2, $3, $5, median[k]; bad++ }
    if (f > 0.30 || f < -0.30) { printf "FAIL: %s %s %s: first %s us, real %s\n", $1, $2, $3, $4, first[k]; bad++ } }
  END { if (rows != 40) { print "FAIL: " rows " rows of 2^24 numbers or more, expected 40"; bad++ }
        if (bad) exit 1; print "ok: " rows " generations as the real GPU measured them" }' "$real" - <<<"$out" ||
    { echo "$out"; exit 1; }
