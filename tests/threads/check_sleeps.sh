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
for mode in alone threads fresh timedcv timedsem timed; do
  for run in $mode $mode.again; do
    if ! "$hysim" run "$scenario" -- "$prog" "$mode" >"$work/$run.out" 2>"$work/$run.err"; then
      cat "$work/$run.out" "$work/$run.err"; fail "the $run run failed"
    fi
    grep -q "^sleeps $mode done" "$work/$run.out" || { cat "$work/$run.out"; fail "the $run run did not finish"; }
  done
  cmp "$work/$mode.out" "$work/$mode.again.out" || fail "two $mode runs print different things"
  cat "$work/$mode.out"
done
# an hour's sleep costs no real time, and shows in the run's simulated time
grep -q "sleep 3600 s: +3600001750000 ns" "$work/alone.out" || fail "the hour's sleep"
grep -Eq "^hysim: simulated 36[0-9][0-9]\.[0-9]+ s in" "$work/alone.err" || { cat "$work/alone.err"; fail "the run's simulated time"; }
echo "ok"
