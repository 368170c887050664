#!/usr/bin/env bash
# The second database of torch's kernels hysim ships (docs/compute.md, "Kernels"): `hysim profile` of
# bench/real/torch_ops_sweep.py on one real GPU, the kernels the training frameworks launch besides a GPT's own
# (concatenations and splits, foreach optimizer and clipping kernels, dropout, masks, softmax, initialisation,
# gathers, a mixture of experts' grouped GEMM), written as OUT_DIR/torch_ops_<gpu>.csv (committed as
# bench/real/data/torch_ops_<gpu>.csv) beside the log.
# usage: bench/real/torch_ops_sweep.sh OUT_DIR   (PYTHON: torch's python)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
source "$root/bench/real/build_profiler.sh"
cd "$root"
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)," \
       "torch $("$py" -c 'import torch; print(torch.__version__)'); bench/real/torch_ops_sweep.sh OUT"
  CUDA_VISIBLE_DEVICES=0 "$w/bin/hysim-profile" --out "$out/torch_ops_$gpu.csv" -- "$py" bench/real/torch_ops_sweep.py 2>&1
  echo "keys: $(grep -vc '^#' "$out/torch_ops_$gpu.csv")"
} 2>&1 | tee "$out/torch_ops_sweep_$gpu.log"
