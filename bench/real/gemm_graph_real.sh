#!/usr/bin/env bash
# Times the GEMM grids of hysim's compute-model calibration on a real GPU with
# CUDA graphs (bench/real/gemm_grid.py --graph, with the kernels cuBLAS ran): the powers of two and the
# off-grid sets A, B, C and D, one CSV each, named after the GPU.
# usage: bench/real/gemm_graph_real.sh OUT_DIR [TYPES [PASSES [SETS]]]
#   TYPES: comma-separated, default bf16,fp16,fp32,tf32; PASSES default 3;
#   SETS: any of p2,a,b,c,d (default all)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 types=${2:-bf16,fp16,fp32,tf32} passes=${3:-3} sets=${4:-p2,a,b,c,d}
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o 'H[0-9][0-9]*' | head -1 | tr 'A-Z' 'a-z')
declare -A sizes=([p2]="" [a]=384,1000,1536,3072,5120,11008 [b]=640,1280,2000,2560,4608,7168,13824
                  [c]=768,1100,1792,2304,3584,6656,9216 [d]=500,1001,1500,2500,4000,7000,12000)
declare -A suffix=([p2]="" [a]=_offgrid [b]=_offgrid_b [c]=_offgrid_c [d]=_offgrid_d)
for set in ${sets//,/ }; do
  args=(--graph --kernels --passes "$passes" --types "$types")
  [ -n "${sizes[$set]}" ] && args+=(--sizes "${sizes[$set]}")
  file="$out/gemm_${gpu}${suffix[$set]}_graph.csv"
  { echo "# measured $(date -u +%F) with: python3 bench/real/gemm_grid.py ${args[*]}"
    python3 "$root/bench/real/gemm_grid.py" "${args[@]}"; } > "$file"
  echo "$file: $(grep -vc '^#' "$file") lines, $SECONDS s"
done
