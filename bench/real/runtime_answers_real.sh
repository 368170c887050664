#!/usr/bin/env bash
# Builds bench/interpose/runtime_answers.cu with nvcc and runs it on a real GPU: the
# real runtime's answers to limit, configuration, id and flag queries, which
# hysim's must match (tests/interpose/check_runtime_answers.sh).
# usage: bench/real/runtime_answers_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -o /tmp/runtime_answers "$root/bench/interpose/runtime_answers.cu"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
{
  echo "# $(date -u +%F) $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
  echo "# command: bench/real/runtime_answers_real.sh"
  /tmp/runtime_answers
} | tee "$out/runtime_answers_$name.txt"
