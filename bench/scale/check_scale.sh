#!/usr/bin/env bash
# Smoke test of scale.sh: 8 and 16 GPUs in both modes finish (exit 0, a
# simulated time, a peak RSS), and one GPU past the per-process limit
# (HS_MAX_GPUS_PER_SERVER, include/hysim/scenario.h) in one process stops at
# once with the message that names it and the key (servers.gpus_per_server).
# usage: check_scale.sh SCALE_SH BUILD_DIR
set -uo pipefail
scale=$1 build=$2 fails=0
check() { # MODE SIZES...: every row must have exit 0, a peak RSS and a simulated time
  local out
  out=$("$scale" -B "$build" -c 60 -m "$@") || { echo "FAIL: scale.sh -m $*"; fails=1; return; }
  echo "$out"
  echo "$out" | awk -F, -v want=$(($# - 1)) 'NR > 1 { n++; if ($3 != 0 || $5 == "" || $8 == "" || $8 <= 0) bad++ }
    END { exit !(n == want && !bad) }' || { echo "FAIL: -m $*: want $(($# - 1)) rows, exit 0"; fails=1; }
}
check servers 8 16
check process 8 16
limit=$(awk '$1 == "#define" && $2 == "HS_MAX_GPUS_PER_SERVER" { print $3 }' \
  "$(dirname "$scale")/../../include/hysim/scenario.h")
[ -n "$limit" ] || { echo "FAIL: HS_MAX_GPUS_PER_SERVER not found in include/hysim/scenario.h"; exit 1; }
over=$((limit + 1))
out=$("$scale" -B "$build" -c 60 -m process $over)
echo "$out"
echo "$out" | grep -q "^process,$over,2,.*servers.gpus_per_server: expected a whole number from 1 to $limit" ||
  { echo "FAIL: $over GPUs in one process: want exit 2 and the loader's limit message"; fails=1; }
[ $fails -eq 0 ] && echo ok || echo FAIL
exit $fails
