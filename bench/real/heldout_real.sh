#!/usr/bin/env bash
# Held-out real figures for hysim's NCCL model: measurements on a real
# 2-GPU server that the model's constants were NOT fitted on
# (bench/RESULTS.md, "Held-out validation on real 2 x H200").
#  (a) torch.distributed (NCCL backend, one process per GPU) all_reduce,
#      all_gather_into_tensor, reduce_scatter_tensor, broadcast and
#      all_to_all_single on float32 buffers, timed with CUDA events around
#      ITERS back-to-back warm calls, as a user would time them. Rows use
#      collectives_bench's op names and size convention (S = the buffer,
#      the gathered output, the scattered input, the all-to-all input).
#  (b) examples/collectives_bench under NCCL settings hysim models:
#      NCCL_PROTO=Simple, NCCL_PROTO=LL128, and NCCL_MIN_NCHANNELS =
#      NCCL_MAX_NCHANNELS = 4 and 8. Each block starts "## env VAR=VALUE ...".
# Versions (GPU, driver, CUDA, system NCCL, torch and its NCCL) head each file.
# usage: bench/real/heldout_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 # NVLink SHARP (multicast) stays off on shared hosts
gpus=$(nvidia-smi -L | wc -l)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
versions() {
  echo "# $(date -u +%F) $gpus x $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  echo "# $(nvcc --version | tail -1)"
  echo "# system NCCL: $(ls "$lib"/libnccl.so.2.* 2>/dev/null | head -1)"
  python3 -c 'import torch; print("# torch", torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))'
  echo "# NCCL_NVLS_ENABLE=0"
}

# (a) torch.distributed, one process per GPU (bench/real/torch_collectives.py)
{
  versions
  echo "# command: bench/real/heldout_real.sh (torch part: torch_collectives.py under torch.distributed.run, $gpus ranks)"
  OPS=allreduce,allgather,reducescatter,broadcast,alltoall python3 -m torch.distributed.run --standalone \
    --nproc_per_node="$gpus" "$root/bench/real/torch_collectives.py" 1M 16M 64M 256M 1G 2>&1 | grep -v '^W\|^\*\|OMP_NUM'
} 2>&1 | tee "$out/heldout_torch_${gpus}x${name}.txt"

# (b) collectives_bench under NCCL settings
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" \
  -o /tmp/collectives_bench "$root/examples/collectives_bench.cu" -lnccl
{
  versions
  echo "# command: bench/real/heldout_real.sh (collectives_bench part, system NCCL)"
  for env in "NCCL_PROTO=Simple" "NCCL_PROTO=LL128" \
    "NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4" "NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8"; do
    echo "## env $env"
    for size in 1M 16M 64M 256M 1G; do
      env $env /tmp/collectives_bench -g "$gpus" -b "$size" -n 20 -w 5
    done
  done
  # the channels NCCL really ran, for the 4-channel setting
  echo "## NCCL's log for NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4 (channels)"
  NCCL_DEBUG=INFO NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4 /tmp/collectives_bench -g "$gpus" -b 64M -n 1 -w 0 2>&1 |
    grep -i "coll channels\|NCCL version" | sed 's/^/#   /' || true
} 2>&1 | tee "$out/heldout_nccl_env_${gpus}x${name}.txt"
