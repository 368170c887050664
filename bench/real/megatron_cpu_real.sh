#!/usr/bin/env bash
# Megatron-Core's GPT of tests/frameworks on one real GPU (TP 1 x PP 1), its
# iteration time beside the process's CPU time per iteration (all its
# threads), to tell how much of a host-bound step is this host's CPU speed
# (bench/RESULTS.md, "Frameworks on 4 real H200s"). usage: megatron_cpu_real.sh OUT
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: megatron_cpu_real.sh OUT}
mkdir -p "$out"
source "$root/bench/real/frameworks_install.sh" # py, site, PYTHONPATH
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_VISIBLE_DEVICES=0
{ "$py" --version; lscpu | grep -E "Model name|^CPU\(s\)"; } >"$out/megatron_cpu_machine.txt" 2>&1
"$py" -m torch.distributed.run --standalone --nproc_per_node=1 "$root/tests/frameworks/megatron_gpt.py" 20 1 1 1 \
  >"$out/megatron_cpu_1gpu.log" 2>&1
grep -h "iteration  *20/" "$out/megatron_cpu_1gpu.log"
