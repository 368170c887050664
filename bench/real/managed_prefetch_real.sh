#!/usr/bin/env bash
# Builds bench/interpose/managed_prefetch.cu with nvcc and runs it on a real
# GPU: cudaMemPrefetchAsync of managed memory to the GPU and back against
# cudaMemcpyAsync of pinned memory, 1 MiB ... 1 GiB (bench/RESULTS.md,
# "Managed memory: prefetch vs copy").
# usage: bench/real/managed_prefetch_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/managed_prefetch "$root/bench/interpose/managed_prefetch.cu"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# command: bench/real/managed_prefetch_real.sh"
  /tmp/managed_prefetch 1024 5
} | tee "$out/managed_prefetch_$name.txt"
