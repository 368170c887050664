#!/usr/bin/env bash
# mutexes.c under `hysim run`: each mode checks its own simulated times (a
# critical section lasts its kernels (or its sleep), sections do not overlap, the last
# ends with the sum of every kernel; a mutex a condition variable's wait
# lets go is taken when the wait begins; a thread blocked behind a holder
# without GPU work does not move the clock) and mutex kinds' errors; every
# mode must finish twice with the same output.
# usage: check_mutexes.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
for mode in held sleeping rwlock handover quiet kinds; do
  for run in $mode $mode.again; do
    if ! timeout 60 "$hysim" run "$scenario" -- "$prog" "$mode" >"$work/$run.out" 2>"$work/$run.err"; then
      cat "$work/$run.out" "$work/$run.err"; fail "the $run run failed"
    fi
    grep -q "^mutexes $mode done" "$work/$run.out" || { cat "$work/$run.out"; fail "the $run run did not finish"; }
    grep -E "ERROR: [A-Za-z]+Sanitizer|runtime error" "$work/$run.err" && fail "sanitizer report in $run"
  done
  cmp "$work/$mode.out" "$work/$mode.again.out" || fail "two $mode runs print different things"
  cat "$work/$mode.out"
done
echo ok
