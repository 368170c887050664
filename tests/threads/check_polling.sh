#!/usr/bin/env bash
# polling.c under `hysim run`: loops on cudaStreamQuery / cudaEventQuery,
# or on the clock, under host_time zero must end (a minute at most), each at
# the simulated time its work or deadline does (the program checks), and
# print the same twice; only the clock loop is told it spins.
# usage: check_polling.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=polling
source "$(dirname "$0")/run_twice.sh"
for mode in stream event round clock; do
  run_twice "$mode"
  cat "$work/$mode.out"
  told=$(grep -c "^hysim: a thread read the clock .* times at one simulated time" "$work/$mode.err" || true)
  want=0
  [[ $mode == clock ]] && want=1
  ((told == want)) || { cat "$work/$mode.err"; fail "$mode: told of spinning $told times, not $want"; }
done
echo "ok"
