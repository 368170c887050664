#!/usr/bin/env bash
# torch._grouped_mm on one real GPU (bench/real/grouped_mm_sweep.py): the
# grouped GEMMs of mixtures of experts by groups, tokens, expert shape and
# split, beside the dense GEMM of the same total. Writes OUT/grouped_mm.csv and
# OUT/machine.txt.
# usage: bench/real/grouped_mm_real.sh OUT [--quick]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: grouped_mm_real.sh OUT [--quick]}
mkdir -p "$out"
py=${PYTHON:-/opt/torch/.venv/bin/python3}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$py" -c 'import torch; print("torch", torch.__version__)'; } >"$out/machine.txt"
CUDA_VISIBLE_DEVICES=0 "$py" "$root/bench/real/grouped_mm_sweep.py" "${@:2}" >"$out/grouped_mm.csv"
