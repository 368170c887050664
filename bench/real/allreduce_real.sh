#!/usr/bin/env bash
# Builds examples/allreduce_bench.cu on a machine with real NVIDIA GPUs, exactly
# as on the simulator's side (nvcc -cudart shared, -lnccl), and runs it on every
# GPU there. Used to show that the example runs unchanged on real hardware and
# to measure real all-reduce figures to compare hysim with.
# With --threads it also runs the small sizes both ways, one thread for all
# GPUs and one thread per GPU (-t 1, as nccl-tests -t), 64K ... 16M, into
# allreduce_real_${gpus}gpu_threads.txt.
# usage: bench/real/allreduce_real.sh [OUT_DIR [--threads]]    (needs nvcc, NCCL headers and library)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
threads=${2:-}
mkdir -p "$out"
# NVLink SHARP (multicast) stays off: the shared hosts must not use it.
export NCCL_NVLS_ENABLE=0
nvidia-smi -L
nvcc --version | tail -2
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
echo "NCCL headers: $inc, library: $lib"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" \
  -o /tmp/allreduce_bench "$root/examples/allreduce_bench.cu" -lnccl
gpus=$(nvidia-smi -L | wc -l)
/tmp/allreduce_bench -g "$gpus" -b 1M -e 1G -n 20 -w 5 \
  | tee "$out/allreduce_real_${gpus}gpu.txt"
if [[ $threads == --threads ]]; then
  for t in 0 1 0 1 0 1; do # three of each, interleaved
    /tmp/allreduce_bench -g "$gpus" -b 64K -e 16M -f 4 -n 50 -w 10 -t $t
  done | tee "$out/allreduce_real_${gpus}gpu_threads.txt"
fi
