#!/usr/bin/env bash
# Builds bench/interpose/curand_gen.cu with nvcc and runs it on a real GPU:
# cuRAND's generation times by generator, distribution and count
# (bench/RESULTS.md, "cuRAND").
# usage: bench/real/curand_gen_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/curand_gen "$root/bench/interpose/curand_gen.cu" -lcurand
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# command: bench/real/curand_gen_real.sh"
  /tmp/curand_gen 5
} | tee "$out/curand_gen_$name.txt"
