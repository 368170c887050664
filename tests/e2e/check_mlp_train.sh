#!/usr/bin/env bash
# examples/mlp_train under hysim, data-parallel on 2 GPUs and alone on 1: its
# step lines; the report's counts against the program's structure (per GPU
# and step 3L GEMMs and 3L+2 own kernels, one all-reduce per gradient bucket,
# the buckets worked out here from the layer sizes, one loss copy); the step no
# shorter than one GPU's kernels, shorter than those kernels plus all of its
# communication (the bucketed all-reduce overlaps backward), and longer at half
# the NVLink rate, by no more than a step's communication.
# usage: check_mlp_train.sh HYSIM SCENARIO HALF_RATE_SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 half=$3 prog=$4 work=$5
. "$(dirname "$0")/example_checks.sh"
rm -rf "$work" && mkdir -p "$work"
steps=5 layers=4 in=256 hidden=512 out=16 bucket_mib=1
args=(--steps $steps --layers $layers --in $in --hidden $hidden --out $out --bucket-mib $bucket_mib)
run_example full "$scenario" "$prog" "${args[@]}"
run_example half "$half" "$prog" "${args[@]}"
run_example one "$scenario" "$prog" --gpus 1 "${args[@]}"
# without a profile its own kernels take the default duration, most of the GPUs' time: a hint says so
grep -q "^hysim: [0-9]* % of the GPUs' time went to kernels hysim does not know" "$work/full.err" ||
    fail "no hint about default-timed kernels: $(grep 'kernel time by source' "$work/full.err")"

# gradients last layer first; a bucket closes once it holds bucket_mib or at layer 0
buckets=$(awk -v L=$layers -v in_=$in -v h=$hidden -v o=$out -v mib=$bucket_mib 'BEGIN {
    for (l = L - 1; l >= 0; l--) { rows = l == L - 1 ? o : h; cols = l == 0 ? in_ : h
        size += rows * cols + rows
        if (size * 4 >= mib * 1048576 || l == 0) { n++; size = 0 } }
    print n }')
grep -q "^# mlp_train: 2 GPU(s),.* $buckets gradient bucket(s)" "$work/full.out" ||
    fail "header: $(head -1 "$work/full.out"), expected 2 GPUs and $buckets buckets"
for run in full:2 one:1; do
    name=${run%:*} n=${run#*:}
    kernel_counts "$name" $((n * (layers + 1 + steps * (6 * layers + 2)))) $((n * steps * 3 * layers)) \
        $((n * steps)) $((steps * buckets))
done

step=$(check_steps full $steps)
compute=$(per_step_compute_ms full $((2 * (layers + 1))) 2 $steps)
comm=$(gpu0_num full communication_s)
# each step also zeroes its 4-byte loss (a memset of up to 4 KiB: 2.8 us,
# bridge/daemon/timeline.c) and copies it to pinned host memory (the scenario's
# pcie.copy_latency_ns, its default 4 us), on the compute stream
copy=0.0068
awk -v s="$step" -v c="$compute" -v m="$comm" -v n=$steps -v copy=$copy 'BEGIN {
    comm = m * 1e3 / n
    if (s < c - 0.001) { print "step " s " ms, shorter than its kernels " c " ms"; exit 1 }
    if (!(s + 0.001 < c + copy + comm)) { print "step " s " ms: no overlap of " comm " ms of all-reduce with " c " ms of kernels and a " copy " ms memset and copy"; exit 1 }
    printf "ok: step %.3f ms, kernels %.3f ms, all-reduce %.3f ms per step, partly hidden\n", s, c, comm }' || fail "step time"
check_half_rate full half $steps
step1=$(check_steps one $steps)
compute1=$(per_step_compute_ms one $((layers + 1)) 1 $steps)
awk -v s="$step1" -v c="$compute1" 'BEGIN { if (s < c - 0.001) { print "1 GPU: step " s " ms < kernels " c " ms"; exit 1 }
    printf "ok: 1 GPU step %.3f ms, kernels %.3f ms\n", s, c }' || fail "1 GPU step time"
# Device memory holds no data (README: a device-to-host copy writes zeros): every step's loss reads 0.
losses=$(grep -c '^step .* loss ' "$work/full.out" || true)
[[ $losses -eq $steps ]] || fail "$losses step lines with a loss, expected $steps"
! grep '^step .* loss ' "$work/full.out" | grep -v ' loss 0\.000000 ' || fail "a loss other than 0 from zeroed device data"
echo ok
