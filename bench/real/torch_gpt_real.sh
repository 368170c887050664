#!/usr/bin/env bash
# examples/torch/gpt.py on real GPUs, for hysim's predictions to answer to
# (bench/RESULTS.md, "PyTorch GPT against real GPUs"): one GPU, then DDP on
# two under torchrun where the machine has them; bf16 autocast (cuDNN's
# attention) and fp32; 20 steps, the first 5 left out. With torch 2.11:
#   bench/real/torch_gpt_real.sh OUT_DIR
# Writes OUT_DIR/torch_gpt_<gpu>.txt: each run's command and output.
set -uo pipefail
out=${1:-.}
mkdir -p "$out"
py=${PYTHON:-python3}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -cd 'A-Za-z0-9')
log=$out/torch_gpt_$gpu.txt
bindir=$(dirname "$(command -v "$py")")
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
  echo "# $(date -u +%F) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)," \
       "torch $("$py" -c 'import torch; print(torch.__version__)')"
  echo "# command: bench/real/torch_gpt_real.sh"
  nvidia-smi topo -m 2>/dev/null | sed 's/^/# topo: /'
  for dtype in bf16 fp32; do
    echo "## 1 GPU, $dtype"
    CUDA_VISIBLE_DEVICES=0 "$py" examples/torch/gpt.py --steps 20 --warmup 5 --dtype "$dtype" 2>&1
    if (($(nvidia-smi -L | wc -l) >= 2)); then
      echo "## 2 GPUs DDP, $dtype"
      "$bindir/torchrun" --standalone --nproc_per_node=2 examples/torch/gpt.py --ddp --steps 20 --warmup 5 \
        --dtype "$dtype" 2>&1 | grep -v '^W[0-9]'
    fi
  done
} >"$log"
cat "$log"
