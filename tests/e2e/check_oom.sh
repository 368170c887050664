#!/usr/bin/env bash
# A program that allocates past the simulated GPU's memory gets
# cudaErrorMemoryAllocation, as on a real GPU, and hysim reports the failure.
# usage: check_oom.sh HYSIM SCENARIO BENCH
set -uo pipefail
hysim=$1 scenario=$2 bench=$3
out=$("$hysim" run "$scenario" -- "$bench" -g 2 -b 100G -e 100G 2>&1)
status=$?
echo "$out"
[[ $status -eq 1 ]] || { echo "expected exit status 1 (program failed), got $status"; exit 1; }
echo "$out" | grep -q "cudaMalloc.*cudaErrorMemoryAllocation" || { echo "no cudaErrorMemoryAllocation"; exit 1; }
echo ok
