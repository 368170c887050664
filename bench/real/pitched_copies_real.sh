#!/usr/bin/env bash
# Builds bench/interpose/pitched_copies.cu with nvcc and runs it on a real GPU:
# the pitch of cudaMallocPitch, and 2D copies and memsets against 1D ones of
# the same bytes (bench/RESULTS.md, "Pitched memory: 2D copies and memsets").
# usage: bench/real/pitched_copies_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/pitched_copies "$root/bench/interpose/pitched_copies.cu"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# command: bench/real/pitched_copies_real.sh"
  /tmp/pitched_copies 20
} | tee "$out/pitched_copies_$name.txt"
