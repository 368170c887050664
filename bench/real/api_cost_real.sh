#!/usr/bin/env bash
# Builds bench/interpose/api_cost.cu with nvcc and runs it on a real GPU: the
# CPU cost per call of the CUDA, cuBLAS and NCCL calls a training step issues
# most (bench/RESULTS.md, "Interposer"; the host-time model's per-call costs).
# With --gemm-grid, the host cost of one cublasGemmEx by type and shape instead
# (api_cost_<gpu>_gemm_grid.txt).
# usage: bench/real/api_cost_real.sh [OUT_DIR [--gemm-grid [BATCH BATCHES]]]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
shift || true
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(256 50)
suffix=
[[ ${args[0]} == --gemm-grid ]] && suffix=_gemm_grid
mkdir -p "$out"
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" -o /tmp/api_cost \
  "$root/bench/interpose/api_cost.cu" -lcublas -lnccl
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# command: bench/real/api_cost_real.sh OUT_DIR ${args[*]}"
  /tmp/api_cost "${args[@]}"
} | tee "$out/api_cost_$name$suffix.txt"
