#!/usr/bin/env bash
# Builds bench/interpose/driver_launch.cu with nvcc and runs it on a real GPU:
# a PTX module's kernels launched through the driver API, their attributes
# and occupancy, and their time per launch (an empty kernel: the GPU's
# launch floor), which tests/interpose/check_driver_launch.sh's answers match.
# usage: bench/real/driver_launch_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/driver_launch "$root/bench/interpose/driver_launch.cu" -lcuda
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# command: bench/real/driver_launch_real.sh"
  /tmp/driver_launch -n 200
} | tee "$out/driver_launch_$name.txt"
