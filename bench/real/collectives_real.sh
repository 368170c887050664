#!/usr/bin/env bash
# Builds examples/collectives_bench.cu and examples/allreduce_bench.cu on a
# machine with real NVIDIA GPUs and runs every NCCL operation on all its GPUs
# over a sweep of sizes: the real figures hysim's NCCL model is calibrated and
# checked against (bench/RESULTS.md).
# usage: bench/real/collectives_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 # NVLink SHARP (multicast) stays off on shared hosts
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
for prog in collectives_bench allreduce_bench; do
  nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" \
    -o /tmp/$prog "$root/examples/$prog.cu" -lnccl
done
gpus=$(nvidia-smi -L | wc -l)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $gpus x $name; NCCL from $lib; NCCL_NVLS_ENABLE=0"
  for size in 64K 1M 16M 64M 256M 1G; do
    /tmp/collectives_bench -g "$gpus" -b "$size" -n 20 -w 5
  done
} | tee "$out/collectives_${gpus}x${name}.txt"
# NCCL's own choice of algorithm and protocol per size, for the tuner model
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,INIT /tmp/allreduce_bench -g "$gpus" -b 64K -e 1G -f 4 -n 5 -w 1 \
  > "$out/allreduce_debug_${gpus}x${name}.txt" 2>&1 || true
tail -20 "$out/allreduce_debug_${gpus}x${name}.txt"
