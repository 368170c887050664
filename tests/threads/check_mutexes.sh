#!/usr/bin/env bash
# mutexes.c under `hysim run`: each mode checks its own simulated times (a
# critical section lasts its kernels or its sleep, sections do not overlap
# (a rwlock's readers may), the last ends with the sum of every kernel; a
# mutex a condition variable's wait lets go is taken when the wait begins;
# a thread blocked behind a holder without GPU work does not move the
# clock) and mutex kinds' errors; every mode must finish twice with the
# same output (run_twice.sh).
# usage: check_mutexes.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=mutexes
source "$(dirname "$0")/run_twice.sh"
for mode in held sleeping spin rwlock handover quiet kinds; do
  run_twice "$mode"
  cat "$work/$mode.out"
done
echo ok
