#!/usr/bin/env bash
# examples/torch/gpt.py with DDP and FSDP2 on 4 real GPUs of one host, fp32 and
# bf16, 12 steps with the first 4 left out, and the host's topology, for
# hysim's predictions to answer to (bench/RESULTS.md, "PyTorch GPT on 4 real
# H200"). usage: bench/real/torch_gpt_4gpu_real.sh OUT_DIR   (PYTHON: torch's python)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
py=${PYTHON:-python3}
bindir=$(dirname "$(command -v "$py")")
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
n=$(nvidia-smi -L | wc -l)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/^NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
log=$out/torch_gpt_${gpu}x$n.txt
cd "$root"
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $n," \
       "torch $("$py" -c 'import torch; print(torch.__version__)'); bench/real/torch_gpt_4gpu_real.sh"
  nvidia-smi topo -m 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/^/# topo: /' | head -$((n + 1))
  for dtype in fp32 bf16; do
    for mode in ddp fsdp; do
      echo "## $n GPUs ${mode^^}, $dtype"
      timeout 120 "$bindir/torchrun" --standalone --nproc_per_node="$n" examples/torch/gpt.py --$mode --steps 12 \
        --warmup 4 --dtype "$dtype" 2>&1 | grep -E '^gpt'
    done
  done
} 2>&1 | tee "$log"
