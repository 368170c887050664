#!/usr/bin/env bash
# `hysim profile` of examples/torch/gpt.py on one real GPU (torch as
# installed there, unmodified): the kernels torch runs and its cuBLAS(Lt)
# GEMM calls, for `hysim run` of the same script on simulated GPUs
# (bench/RESULTS.md, "PyTorch GPT from a one-GPU profile"). Each dtype's
# database, and the log with the script's own step times as is and under the
# recorder, go to OUT_DIR.
# usage: bench/real/torch_profile_real.sh OUT_DIR   (PYTHON: torch's python, default python3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
source "$root/bench/real/build_profiler.sh"
log=$out/torch_profile_$gpu.log
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)," \
       "torch $("$py" -c 'import torch; print(torch.__version__)'); CUPTI $cupti_so"
  echo "# command: bench/real/torch_profile_real.sh"
} | tee "$log"
cd "$root"
for dtype in fp32 bf16; do
  db=$out/profile_gpt_${gpu}_$dtype.csv
  {
    echo "## gpt.py --dtype $dtype: as is"
    CUDA_VISIBLE_DEVICES=0 "$py" examples/torch/gpt.py --steps 12 --warmup 4 --dtype "$dtype"
    echo "## gpt.py --dtype $dtype: under hysim profile"
    CUDA_VISIBLE_DEVICES=0 "$w/bin/hysim-profile" --out "$db" -- "$py" examples/torch/gpt.py --steps 12 --warmup 4 \
      --dtype "$dtype"
    echo "## $(grep -vc '^#' "$db") keys, $(grep -c ',gemm:' "$db") of them cuBLAS GEMM calls"
  } 2>&1 | tee -a "$log"
done
