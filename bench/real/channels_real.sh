#!/usr/bin/env bash
# Real per-channel throughput of NCCL on a 2-GPU server: examples/
# collectives_bench with the channel count forced (NCCL_MIN_NCHANNELS =
# NCCL_MAX_NCHANNELS = C) for C in 1 2 3 6 12 16, at 64 MiB..1 GiB. hysim's
# per-channel rate cap (scenario key nccl.channel_gbps) is fitted on this
# sweep only; the 4- and 8-channel rows of heldout_nccl_env_*.txt stay held
# out (bench/RESULTS.md, "Held-out validation on real 2 x H200").
# Each block starts "## env NCCL_MIN_NCHANNELS=C NCCL_MAX_NCHANNELS=C".
# usage: bench/real/channels_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 # NVLink SHARP (multicast) stays off on shared hosts
gpus=$(nvidia-smi -L | wc -l)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" \
  -o /tmp/collectives_bench "$root/examples/collectives_bench.cu" -lnccl
{
  echo "# $(date -u +%F) $gpus x $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  echo "# $(nvcc --version | tail -1)"
  echo "# system NCCL: $(ls "$lib"/libnccl.so.2.* 2>/dev/null | head -1)"
  echo "# NCCL_NVLS_ENABLE=0"
  echo "# command: bench/real/channels_real.sh"
  for c in 1 2 3 6 12 16; do
    echo "## env NCCL_MIN_NCHANNELS=$c NCCL_MAX_NCHANNELS=$c"
    for size in 64M 256M 1G; do
      NCCL_MIN_NCHANNELS=$c NCCL_MAX_NCHANNELS=$c /tmp/collectives_bench -g "$gpus" -b "$size" -n 10 -w 3
    done
  done
  # the channels and protocol NCCL really ran with one channel
  echo "## NCCL's log for NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1"
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 \
    /tmp/collectives_bench -g "$gpus" -b 64M -n 1 -w 0 2>&1 |
    grep -i "channels\|NCCL version\|protocol" | head -20 | sed 's/^/#   /' || true
} 2>&1 | tee "$out/channels_${gpus}x${name}.txt"
