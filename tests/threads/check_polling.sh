#!/usr/bin/env bash
# polling.c under `hysim run`: loops on cudaStreamQuery / cudaEventQuery
# under host_time zero must end (a minute at most), each at the simulated
# time its work does (the program checks), and print the same twice.
# usage: check_polling.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=polling
source "$(dirname "$0")/run_twice.sh"
for mode in stream event round; do
  run_twice "$mode"
  cat "$work/$mode.out"
done
echo "ok"
