#!/usr/bin/env bash
# Builds the driver-API programs of bench/interpose and runs them on a real
# GPU: driver_launch.cu (nvcc: a PTX module's kernels launched through the
# driver API, their attributes and occupancy, their time per launch) and
# driver_memory.c (cc, the driver API alone: memory, streams, events, copies,
# a memset, a launch), whose answers and times tests/interpose's
# check_driver_launch.sh and check_driver_memory.sh hold hysim to.
# usage: bench/real/driver_launch_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/driver_launch "$root/bench/interpose/driver_launch.cu" -lcuda
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
cc -O2 -std=c11 -I"$cuda/include" -o /tmp/driver_memory "$root/bench/interpose/driver_memory.c" -L"$cuda/lib64/stubs" -lcuda
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
header() {
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# command: bench/real/driver_launch_real.sh"
}
{ header; /tmp/driver_launch -n 200; } | tee "$out/driver_launch_$name.txt"
{ header; /tmp/driver_memory; /tmp/driver_memory | grep '^time:' | sed 's/^time:/again:/'; } | tee "$out/driver_memory_$name.txt"
