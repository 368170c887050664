#!/usr/bin/env bash
# Builds bench/interpose/launch_cost.cu with nvcc and runs it on a real GPU:
# the CPU cost of a real cudaLaunchKernel and cudaEventRecord, to compare
# with the interposer's (bench/RESULTS.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/launch_cost "$root/bench/interpose/launch_cost.cu"
/tmp/launch_cost 200000
