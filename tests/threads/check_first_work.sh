#!/usr/bin/env bash
# first_work.c under `hysim run`: threads whose first GPU work comes after
# another thread waits on its GPU start at the host time they were started
# at, however late the machine ran them; each mode checks its own simulated
# times, must finish, and print the same twice.
# usage: check_first_work.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=first_work
source "$(dirname "$0")/run_twice.sh"
for mode in together staggered creator joined helper; do
  run_twice "$mode"
  cat "$work/$mode.out"
done
echo "ok"
