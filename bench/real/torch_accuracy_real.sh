#!/usr/bin/env bash
# examples/torch/gpt.py of one size on a real 2-GPU host, for hysim's
# step-time accuracy (bench/RESULTS.md, "PyTorch step times from a one-GPU
# profile"): per dtype, `hysim profile` of one GPU (the database hysim
# times the kernels from), then the script as is on 1 GPU, DDP on 2 and
# FSDP2 on 2 (the runs the profile never saw). 12 steps, the first 4 left out.
# usage: bench/real/torch_accuracy_real.sh OUT_DIR NAME [GPT_ARGS...]
#   e.g. NAME=large --layers 8 --dim 1024 --heads 16   (PYTHON: torch's python)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT_DIR}
name=${2:?NAME}
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
bindir=$(dirname "$(command -v "$py")")
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
source "$root/bench/real/build_profiler.sh"
log=$out/torch_accuracy_${gpu}_$name.txt
cd "$root"
steps=(--steps 12 --warmup 4)
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x" \
       "$(nvidia-smi -L | wc -l), torch $("$py" -c 'import torch; print(torch.__version__)')"
  echo "# command: bench/real/torch_accuracy_real.sh OUT $name $*"
  nvidia-smi topo -m 2>/dev/null | head -3 | sed 's/^/# topo: /'
  for dtype in fp32 bf16; do
    echo "## profile, 1 GPU, $dtype"
    CUDA_VISIBLE_DEVICES=0 "$w/bin/hysim-profile" --out "$out/profile_gpt_${gpu}_${name}_$dtype.csv" -- \
      "$py" examples/torch/gpt.py "$@" "${steps[@]}" --dtype "$dtype" 2>&1 | grep -E '^gpt|^hysim'
    echo "## 1 GPU, $dtype"
    CUDA_VISIBLE_DEVICES=0 "$py" examples/torch/gpt.py "$@" "${steps[@]}" --dtype "$dtype" 2>&1 | grep -E '^gpt'
    for mode in ddp fsdp; do
      echo "## 2 GPUs ${mode^^}, $dtype"
      "$bindir/torchrun" --standalone --nproc_per_node=2 examples/torch/gpt.py "$@" "${steps[@]}" --$mode \
        --dtype "$dtype" 2>&1 | grep -E '^gpt'
    done
  done
} 2>&1 | tee "$log"
