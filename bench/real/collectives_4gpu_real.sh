#!/usr/bin/env bash
# Every NCCL collective, 1 MiB - 4 GiB, NVLS off, on all the GPUs of one host
# (4 or 8) and on 2 of them: one process driving all GPUs
# (examples/collectives_bench, the host's NCCL) and one process per GPU
# (bench/real/torch_collectives.py under torchrun, torch's NCCL); NCCL's own
# choice of algorithm, protocol and channels per collective; the host's
# topology. The figures hysim's NCCL model answers to past two GPUs
# (bench/RESULTS.md). usage: bench/real/collectives_4gpu_real.sh OUT_DIR
# (PYTHON: torch's python)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
py=${PYTHON:-python3}
bindir=$(dirname "$(command -v "$py")")
export NCCL_NVLS_ENABLE=0 # NVLink SHARP (multicast) stays off on shared hosts
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" \
  -o /tmp/collectives_bench "$root/examples/collectives_bench.cu" -lnccl || exit 1
n=$(nvidia-smi -L | wc -l)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/^NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
log=$out/collectives_${gpu}x$n.txt
sizes="1M 4M 16M 64M 256M 1G 4G"
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $n;" \
       "system NCCL $(ls "$lib"/libnccl.so.2.* | head -1); torch $("$py" -c 'import torch; print(torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))')"
  echo "# command: bench/real/collectives_4gpu_real.sh OUT_DIR; NCCL_NVLS_ENABLE=0"
  nvidia-smi topo -m 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/^/# topo: /' | head -$((n + 1))
  for g in "$n" 2; do
    echo "## one process, $g GPUs (collectives_bench -g $g)"
    for size in $sizes; do
      timeout 120 /tmp/collectives_bench -g "$g" -b "$size" -n 20 -w 5
    done
    echo "## one process per GPU, $g GPUs (torchrun --nproc_per_node=$g bench/real/torch_collectives.py)"
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) timeout 300 "$bindir/torchrun" --standalone --nproc_per_node="$g" \
      "$root/bench/real/torch_collectives.py" $sizes 2>&1 | grep -v '^W\|^\*\|OMP_NUM'
  done
  echo "## NCCL's choices, $n GPUs (NCCL_DEBUG_SUBSYS=TUNING,INIT; 1M, 64M, 1G)"
  for size in 1M 64M 1G; do
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,INIT /tmp/collectives_bench -g "$n" -b "$size" -n 1 -w 0 2>&1 |
      grep -E "Bytes -> Algo|coll channels|NCCL version" | grep -v " \[[1-9][0-9]*\] NCCL" | sort -u | sed 's/^/#   /'
  done
} 2>&1 | tee "$log"
