#!/usr/bin/env bash
# Builds bench/interpose/api_cost.cu with nvcc and runs it on a real GPU: the
# CPU cost per call of the CUDA, cuBLAS and NCCL calls a training step issues
# most (bench/RESULTS.md, "Interposer"; the host-time model's per-call costs).
# usage: bench/real/api_cost_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" -o /tmp/api_cost \
  "$root/bench/interpose/api_cost.cu" -lcublas -lnccl
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# command: bench/real/api_cost_real.sh"
  /tmp/api_cost 256 50
} | tee "$out/api_cost_$name.txt"
