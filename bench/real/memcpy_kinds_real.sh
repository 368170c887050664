#!/usr/bin/env bash
# Builds bench/interpose/memcpy_kinds.cu with nvcc and runs it on a real GPU:
# host <-> device copies of pinned and of pageable host memory, 4 KiB ...
# 1 GiB, by cudaMemcpy and cudaMemcpyAsync (bench/RESULTS.md, "Host copies:
# pinned and pageable"). Also prints the host's memcpy rate (the staging of a
# pageable copy is one) and its CPU model.
# usage: bench/real/memcpy_kinds_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/memcpy_kinds "$root/bench/interpose/memcpy_kinds.cu"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
  echo "# PCIe link: $(nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current --format=csv,noheader | head -1) (gen current, gen max, width)"
  echo "# command: bench/real/memcpy_kinds_real.sh"
  /tmp/memcpy_kinds 1024 5
  echo "# the same again (how well it repeats)"
  /tmp/memcpy_kinds 1024 5
} | tee "$out/memcpy_kinds_$name.txt"
