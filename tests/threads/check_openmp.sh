#!/usr/bin/env bash
# openmp.c under `hysim run`: OpenMP threads, one GPU each, that meet in
# libgomp's team barriers (explicit, a loop's, a region's end) must finish
# (a minute at most) with the kernels' times (the program checks) and print
# the same twice.
# usage: check_openmp.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=openmp
source "$(dirname "$0")/run_twice.sh"
for mode in barrier loop for; do
  run_twice "$mode"
  cat "$work/$mode.out"
done
echo "ok"
