#!/usr/bin/env bash
# examples/pipeline_parallel under hysim, 2 stages, GPipe: its step lines; the
# report's counts against the program's structure (per micro-batch one
# send/receive pair per stage boundary each way; the GEMMs and own kernels of
# every stage's forward and backward; the copies of the loss gradient and of
# an input gradient left in the other buffer by an even number of layers),
# with 2 and 3 layers per stage; the step no shorter than a stage's kernels
# on average, shorter than the stages' kernels run one after the other (the
# stages overlap), and longer at half the NVLink rate, by no more than a step
# of communication.
# usage: check_pipeline_parallel.sh HYSIM SCENARIO HALF_RATE_SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 half=$3 prog=$4 work=$5
. "$(dirname "$0")/example_checks.sh"
rm -rf "$work" && mkdir -p "$work"
steps=4 n=2

# expect NAME M LPS: the counts of a run with M micro-batches and LPS layers per stage
expect() {
    local name=$1 m=$2 l=$3
    local own=$((m * (1 + n * l + 2) + m * n * l + m * (n * l - 1) + n))
    local gemms=$((m * n * l + m + m * n * l + m * (n * l - 1)))
    local copies=$((m + (l % 2 == 0 ? (n - 1) * m : 0) + 1))
    grep -q "^# pipeline_parallel: $n stage(s) x $l layer(s) of .*, $m micro-batches" "$work/$name.out" ||
        fail "$name: header $(head -1 "$work/$name.out")"
    kernel_counts "$name" $((n * l + 1 + steps * (own + gemms))) $((steps * gemms)) $((steps * copies)) \
        $((steps * 2 * (n - 1) * m))
}
run_example full "$scenario" "$prog" --steps $steps --micro-batches 4 --layers-per-stage 2
run_example half "$half" "$prog" --steps $steps --micro-batches 4 --layers-per-stage 2
run_example odd "$scenario" "$prog" --steps $steps --micro-batches 3 --layers-per-stage 3
expect full 4 2
expect odd 3 3
check_steps odd $steps >/dev/null

step=$(check_steps full $steps)
stage=$(per_step_compute_ms full $((n * 2 + 1)) $n $steps)
awk -v s="$step" -v c="$stage" -v n=$n 'BEGIN {
    if (s < c - 0.001) { print "step " s " ms, shorter than a stage'"'"'s kernels " c " ms"; exit 1 }
    if (!(s < n * c)) { print "step " s " ms: the stages do not overlap (" n " x " c " ms)"; exit 1 }
    printf "ok: step %.3f ms, a stage'"'"'s kernels %.3f ms, %d stages one after the other %.3f ms\n", s, c, n, n * c }' ||
    fail "step time"
check_half_rate full half $steps
echo ok
