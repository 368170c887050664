#!/usr/bin/env bash
# Builds bench/interpose/PROGRAM.cu (runtime_answers by default, or
# driver_contexts) with nvcc and runs it on a real GPU: the real runtime's
# answers to limit, configuration, id and flag queries (runtime_answers), or
# to driver entry-point and context calls (driver_contexts), which hysim's
# must match (tests/interpose/check_runtime_answers.sh).
# usage: bench/real/runtime_answers_real.sh [OUT_DIR [PROGRAM]]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.} prog=${2:-runtime_answers}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o "/tmp/$prog" "$root/bench/interpose/$prog.cu"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# command: bench/real/runtime_answers_real.sh OUT $prog"
  "/tmp/$prog"
} | tee "$out/${prog}_$name.txt"
