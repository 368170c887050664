#!/usr/bin/env bash
# A program of tests/threads that checks its own simulated times, under
# `hysim run`: each mode must finish (a minute at most, run_twice.sh) and
# print the same twice.
# usage: check_modes.sh HYSIM SCENARIO PROGRAM WORK_DIR MODE...
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
shift 4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=$(basename "$prog")
source "$(dirname "$0")/run_twice.sh"
for mode in "$@"; do
  run_twice "$mode"
  cat "$work/$mode.out"
done
echo "ok"
