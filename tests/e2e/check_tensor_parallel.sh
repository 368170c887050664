#!/usr/bin/env bash
# examples/tensor_parallel under hysim on 2 GPUs: its step lines; the report's
# counts against the program's structure (per block an all-gather and a
# reduce-scatter forward and again backward, one all-reduce of the replicated
# bias per block; per GPU and step 1+6L GEMMs and 2+7L own kernels); GPU 0's
# link carried at least the shards it sent; the step is its kernels plus its
# collectives (one stream per GPU); and it is longer at half the NVLink rate,
# by no more than a step of communication.
# usage: check_tensor_parallel.sh HYSIM SCENARIO HALF_RATE_SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 half=$3 prog=$4 work=$5
. "$(dirname "$0")/example_checks.sh"
rm -rf "$work" && mkdir -p "$work"
steps=4 n=2 layers=2 tokens=512 hidden=512
args=(--steps $steps --layers $layers --tokens $tokens --hidden $hidden)
run_example full "$scenario" "$prog" "${args[@]}"
run_example half "$half" "$prog" "${args[@]}"
grep -q "^# tensor_parallel: $n GPU(s), $layers block(s) $hidden -> $((4 * hidden)) -> $hidden, $tokens tokens" \
    "$work/full.out" || fail "header: $(head -1 "$work/full.out")"
setup=$((n * (2 * layers + 1)))
kernel_counts full $((setup + steps * n * ((2 + 7 * layers) + (1 + 6 * layers)))) $((steps * n * (1 + 6 * layers))) \
    $((steps * n)) $((steps * 5 * layers))
# 4 collectives per block and step, each moving GPU 0's shard (hidden x tokens/n floats) to the other GPU
check_link_floor full 'gpu0>nvs0' $((steps * 4 * layers * (n - 1) * hidden * tokens / n * 4))
check_serial_step full $setup $n $steps 1 1 # the loss: its memset and its copy
check_half_rate full half $steps
echo ok
