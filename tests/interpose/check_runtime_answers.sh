#!/usr/bin/env bash
# bench/interpose/runtime_answers or driver_contexts (nvcc, the real headers)
# under hysim run: its answers (to limit, configuration, id and flag calls;
# to driver entry-point and context calls) must be a real H100's
# (bench/real/data/runtime_answers_h100.txt, driver_contexts_h100.txt;
# bench/real/runtime_answers_real.sh) line for line, values and errors;
# stream ids, which CUDA numbers its own way, need only be distinct.
# usage: check_runtime_answers.sh HYSIM SCENARIO PROGRAM REAL_ANSWERS
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 real=$4
out=$("$hysim" run "$scenario" -- "$prog" 2>&1) || { echo "$out"; echo "FAIL: hysim run"; exit 1; }
answers() { grep ' = ' | grep -v '^cudaStreamGetId'; }
if ! diff <(answers <"$real") <(echo "$out" | answers); then
    echo "FAIL: hysim's answers (>) differ from the real H100's (<)"; exit 1
fi
want=$(grep -c '^cudaStreamGetId' "$real" || true)
ids=$(echo "$out" | grep '^cudaStreamGetId' | grep -c '(cudaSuccess)' || true)
distinct=$(echo "$out" | grep '^cudaStreamGetId' | sed 's/.*= \([0-9]*\) .*/\1/' | sort -u | wc -l || true)
[[ $ids -eq $want && $distinct -eq $want ]] || { echo "$out"; echo "FAIL: $ids stream ids, $distinct distinct"; exit 1; }
echo "ok: $(echo "$out" | answers | wc -l) answers as the H100's, $want distinct stream ids"
