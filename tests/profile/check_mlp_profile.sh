#!/usr/bin/env bash
# examples/mlp_train under `hysim run` on one simulated H200 whose scenario
# points compute.profiles at the database measured on a real H200
# (bench/real/data/profile_h200.csv): every launch of the program's own
# kernels (the __global__ functions of mlp_train.cu) is timed from that file,
# none by the default, and the profile time in the run report is the sum of
# the measured medians. The expected counts come from the database's own
# "# N launches" comments, written by the recorder for the same command line
# on the real GPU; cuBLAS's kernels in the file stay unused (hysim times
# cuBLAS at its API with the GEMM model).
# usage: check_mlp_profile.sh HYSIM SCENARIO MLP_TRAIN MLP_TRAIN_CU DATABASE TMPDIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 source=$4 db=$5 tmp=$6
rm -rf "$tmp" && mkdir -p "$tmp"
args=$(sed -n 's/^## mlp_train \(.*\): under hysim profile$/\1/p' "${db%.csv}_mlp_train.log")
echo "command line of the measurement: mlp_train $args"
# shellcheck disable=SC2086 # the recorded arguments, word-split as recorded
"$hysim" run --out "$tmp/run" "$scenario" -- "$prog" $args > "$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; exit 1; }
tail -5 "$tmp/out.txt"
sed -n 's/.*__global__ void \([A-Za-z_0-9]*\)(.*/\1/p' "$source" | sort -u > "$tmp/own.txt"
report=$(tr -d '\n' < "$tmp/run/report.json")
awk -v report="$report" '
  FNR == NR { own[$1] = 1; next }
  /^# [0-9]+ launches/ { n = $2; next }
  /^[^#]/ {
    split($0, f, ",")
    name = f[2]
    if (match(name, /^_Z[0-9]+/)) {
      len = substr(name, 3, RLENGTH - 2) + 0
      base = substr(name, RLENGTH + 1, len)
      if (base in own) { kernels += n; ps += n * sprintf("%.0f", f[10] * 1e6); keys++ }
    }
  }
  END {
    if (!match(report, /"profile": *\{"kernels": *[0-9]+, *"time_s": *[0-9.e+-]+/)) { print "no profile counts in report.json"; exit 1 }
    split(substr(report, RSTART, RLENGTH), p, /[:,] */)
    got_k = p[3] + 0; got_s = p[5] + 0
    match(report, /"default": *\{"kernels": *[0-9]+/)
    split(substr(report, RSTART, RLENGTH), q, /: */)
    got_d = q[3] + 0
    printf "own kernels in the database: %d keys, %d launches, %.6f ms\n", keys, kernels, ps * 1e-9
    printf "hysim: profile %d kernels, %.6f ms; default %d kernels\n", got_k, got_s * 1e3, got_d
    bad = 0
    if (keys == 0) { print "FAIL: no own kernel of mlp_train.cu in the database"; bad++ }
    if (got_k != kernels) { print "FAIL: want " kernels " kernels timed by the profile"; bad++ }
    if (got_d != 0) { print "FAIL: want no kernel timed by the default"; bad++ }
    tol = 1e-9 * ps + 1; if (got_s * 1e12 - ps > tol || ps - got_s * 1e12 > tol) { print "FAIL: want the sum of the measured medians"; bad++ }
    if (bad) { print "(if examples/mlp_train.cu changed since the measurement, record it again: bench/real/profile_real.sh)"; exit 1 }
    print "ok"
  }' "$tmp/own.txt" "$db"
