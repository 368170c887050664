#!/usr/bin/env bash
# sleeps.c under `hysim run`: each mode checks its own simulated times (sleeps
# last their length on the simulated clock, kernels and other threads' work
# are not moved by them, timed waits wait their length in real time); every
# mode must finish, and print the same twice.
# usage: check_sleeps.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=sleeps
source "$(dirname "$0")/run_twice.sh"
for mode in alone threads fresh timedcv timedsem handoff timed; do
  run_twice "$mode"
  cat "$work/$mode.out"
done
# an hour's sleep costs no real time, and shows in the run's simulated time
grep -q "sleep 3600 s: +3600001750000 ns" "$work/alone.out" || fail "the hour's sleep"
grep -Eq "^hysim: simulated 36[0-9][0-9]\.[0-9]+ s in" "$work/alone.err" || { cat "$work/alone.err"; fail "the run's simulated time"; }
echo "ok"
