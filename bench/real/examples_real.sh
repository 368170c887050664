#!/usr/bin/env bash
# Builds the training examples (examples/mlp_train.cu, pipeline_parallel.cu,
# tensor_parallel.cu, expert_parallel.cu) on a machine with real NVIDIA GPUs
# exactly as on the simulator's side (nvcc -cudart shared, -lcublas, -lnccl)
# and runs each on every GPU there, at the defaults and at one larger size.
# The output, one block per command headed by "### COMMAND", is what
# bench/RESULTS.md ("Training examples on real 2 x H200") compares hysim with.
# usage: bench/real/examples_real.sh [OUT_DIR] [EXAMPLE...]   (default: all four)
# With HOST_CALLS_SO set (bench/real/host_calls_real.sh sets it), every
# command runs a second time with that library preloaded, which appends the
# host time of each of its calls to the log.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
shift || true
examples=("$@")
[[ ${#examples[@]} -gt 0 ]] || examples=(mlp_train pipeline_parallel tensor_parallel expert_parallel)
mkdir -p "$out"
# NVLink SHARP (multicast) stays off: the shared hosts must not use it.
export NCCL_NVLS_ENABLE=0
log=$out/examples_h200x2.txt
: >"$log"
{
  nvidia-smi -L
  nvcc --version | tail -2
} | tee -a "$log"
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
echo "NCCL headers: $inc, library: $lib" | tee -a "$log"
gpus=$(nvidia-smi -L | wc -l)
bin=$(mktemp -d)
for ex in "${examples[@]}"; do
  nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" \
    -o "$bin/$ex" "$root/examples/$ex.cu" -lcublas -lnccl &
done
wait
run() { # EXAMPLE ARGS...: one block of the log
  echo "### $*" | tee -a "$log"
  "$bin/$@" 2>&1 | tee -a "$log" || echo "### failed with status $?" | tee -a "$log"
  if [[ -n ${HOST_CALLS_SO:-} ]]; then
    echo "### $*: host calls" | tee -a "$log"
    LD_PRELOAD=$HOST_CALLS_SO HOST_CALLS_OUT=$log "$bin/$@" >>"$log" 2>&1 ||
      echo "### failed with status $?" | tee -a "$log"
  fi
}
for ex in "${examples[@]}"; do
  case $ex in
  mlp_train)
    run mlp_train --steps 30
    run mlp_train --optimizer adam --steps 30
    run mlp_train --gpus 1 --steps 10
    run mlp_train --batch 512 --in 1024 --hidden 2048 --out 128 --bucket-mib 4 --steps 20 --optimizer adam --lr 3e-4 ;;
  pipeline_parallel)
    run pipeline_parallel
    run pipeline_parallel --micro-batches 8 --micro-batch 256 --hidden 2048 --steps 10 --lr 3e-4 ;;
  tensor_parallel)
    run tensor_parallel
    run tensor_parallel --tokens 4096 --hidden 2048 --steps 10 --lr 3e-4 ;;
  expert_parallel)
    run expert_parallel
    run expert_parallel --exchange sendrecv
    run expert_parallel --tokens 4096 --hidden 2048 --ffn 4096 --steps 10 ;;
  *) echo "examples_real.sh: no example $ex" >&2; exit 2 ;;
  esac
done
echo "examples_real.sh: $gpus GPU(s), done" | tee -a "$log"
