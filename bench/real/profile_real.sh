#!/usr/bin/env bash
# `hysim profile` on a machine with a real NVIDIA GPU: builds the profile
# recorder and `hysim profile` alone (build_profiler.sh: the GPU machine
# needs no ns-3), builds an example with nvcc, runs it once as is (its own
# timings) and once under the recorder, and leaves the profile database and
# the log in OUT_DIR (bench/real/data/profile_*, bench/RESULTS.md).
# usage: bench/real/profile_real.sh [OUT_DIR [EXAMPLE [ARGS...]]]
#   EXAMPLE: a name in examples/ or a .cu file's path from the repository root
#   (bench/compute/kernel_gap.cu); default: examples/mlp_train.cu --gpus 1
#   --steps 20 (gemm_bench if mlp_train.cu is not there)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
out=$(cd "$out" && pwd)
example=${2:-mlp_train}
source_cu=$root/examples/$example.cu
case $example in
  *.cu) source_cu=$root/$example; example=$(basename "$example" .cu) ;;
esac
[ -f "$source_cu" ] || { example=gemm_bench; source_cu=$root/examples/gemm_bench.cu; }
shift $(($# > 2 ? 2 : $#))
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  case $example in
    mlp_train) args=(--gpus 1 --steps 20) ;;
    *) args=(-i 20) ;;
  esac
fi
export NCCL_NVLS_ENABLE=0 # NVLink SHARP (multicast) stays off on shared hosts

source "$root/bench/real/build_profiler.sh"
log=$out/profile_${gpu}_${example}.log
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "# $("$nvcc" --version | tail -1); CUPTI $cupti_h, $cupti_so; gcc $(gcc -dumpfullversion)"
} | tee "$log"

"$nvcc" -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$nccl_h" -L"$nccl_so" -o "$w/bin/$example" \
  "$source_cu" -lcublas -lcublasLt -lnccl
export LD_LIBRARY_PATH=$nccl_so:$cuda/lib64:${LD_LIBRARY_PATH:-}

{
  echo "## $example ${args[*]}: as is"
  "$w/bin/$example" "${args[@]}"
  echo "## $example ${args[*]}: under hysim profile"
  "$w/bin/hysim-profile" --out "$out/profile_$gpu.csv" -- "$w/bin/$example" "${args[@]}"
} 2>&1 | tee -a "$log"
# the keys are mangled names, as hysim's interposer sends them, and cuBLAS GEMM calls by type and shape
grep -c ',_Z' "$out/profile_$gpu.csv" || echo "no mangled kernel name recorded"
grep -c ',gemm:' "$out/profile_$gpu.csv" || echo "no cuBLAS GEMM call recorded"
cat "$out/profile_$gpu.csv"
