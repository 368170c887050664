#!/usr/bin/env bash
# torch._grouped_mm on one real GPU (bench/real/grouped_mm_sweep.py): the
# grouped GEMMs of mixtures of experts by groups, tokens, expert shape and
# split, beside the dense GEMM of the same total. Writes OUT/grouped_mm.csv and
# OUT/machine.txt (with --heldout, OUT/grouped_mm_heldout.csv: shapes no fit saw).
# usage: bench/real/grouped_mm_real.sh OUT [--quick | --heldout]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: grouped_mm_real.sh OUT [--quick | --heldout]}
mkdir -p "$out"
py=${PYTHON:-/opt/torch/.venv/bin/python3}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$py" -c 'import torch; print("torch", torch.__version__)'; } >"$out/machine.txt"
csv=$out/grouped_mm${2:+_${2#--}}.csv
CUDA_VISIBLE_DEVICES=0 "$py" "$root/bench/real/grouped_mm_sweep.py" "${@:2}" >"$csv"
