#!/usr/bin/env bash
# The database of torch's common kernels hysim ships (docs/compute.md,
# "Kernels"): `hysim profile` of examples/torch/gpt.py (2 layers) on one real
# GPU over model widths from 512 to 8192 (70B-class layers) and sequences of
# 512 and 2048 tokens, for each dtype given, and FSDP2 (torchrun on one GPU:
# its all-gather copy-in and split kernels) at three widths;
# bench/real/merge_profiles.py
# makes the runs' databases one, OUT_DIR/torch_kernels_<gpu>.csv (committed
# as bench/real/data/torch_kernels_<gpu>.csv), beside the log.
# usage: bench/real/torch_kernel_sweep.sh OUT_DIR DTYPE...   (PYTHON: torch's python)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT_DIR}
shift
(($#)) || { echo "usage: $0 OUT_DIR DTYPE..." >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
source "$root/bench/real/build_profiler.sh"
cd "$root"
log=$out/torch_kernel_sweep_$gpu.log
runs=$w/sweep
rm -rf "$runs" && mkdir -p "$runs"
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)," \
     "torch $("$py" -c 'import torch; print(torch.__version__)'); bench/real/torch_kernel_sweep.sh OUT $*" | tee "$log"
for dtype in "$@"; do
for shape in 512:8 1024:16 2048:16 4096:32 8192:64; do
  dim=${shape%:*} heads=${shape#*:}
  for seq in 512 2048; do
    batch=$((4096 / seq))
    db=$runs/${dtype}_d${dim}_s$seq.csv
    echo "## $dtype: dim $dim heads $heads seq $seq batch $batch" | tee -a "$log"
    CUDA_VISIBLE_DEVICES=0 "$w/bin/hysim-profile" --out "$db" -- "$py" examples/torch/gpt.py --layers 2 --dim "$dim" \
      --heads "$heads" --seq "$seq" --batch "$batch" --steps 3 --warmup 1 --dtype "$dtype" 2>&1 |
      grep -E '^gpt|^hysim profile: [0-9]' | tee -a "$log"
  done
done
  for dim in 512 2048 8192; do # FSDP2's own kernels, on one GPU under torchrun
    heads=$((dim / 64 > 8 ? dim / 64 : 8))
    db=$runs/${dtype}_fsdp_d$dim.csv
    echo "## $dtype: FSDP2, dim $dim heads $heads seq 512 batch 8" | tee -a "$log"
    CUDA_VISIBLE_DEVICES=0 "$w/bin/hysim-profile" --out "$db" -- "$(dirname "$(command -v "$py")")/torchrun" \
      --standalone --nproc_per_node=1 examples/torch/gpt.py --fsdp --layers 2 --dim "$dim" --heads "$heads" \
      --steps 3 --warmup 1 --dtype "$dtype" 2>&1 | grep -E '^gpt|^hysim profile: [0-9]' | tee -a "$log"
  done
done
python3 "$root/bench/real/merge_profiles.py" "$out/torch_kernels_$gpu.csv" "$runs"/*.csv | tee -a "$log"
