#!/usr/bin/env bash
# examples/expert_parallel under hysim on 2 GPUs, with ncclAlltoAll and with
# grouped ncclSend/ncclRecv: its step lines; the report's counts against the
# program's structure (two exchanges per MoE layer: one all-to-all, or one
# send/receive pair per ordered pair of GPUs and a local copy; per GPU and
# layer 1+2E GEMMs and 3+E own kernels); GPU 0's link carried at least the
# expert slots it sent (capacity = ceil(1.25 x tokens / experts)); the step
# is its kernels plus its collectives (one stream per GPU); and it is longer
# at half the NVLink rate, by no more than a step of communication.
# usage: check_expert_parallel.sh HYSIM SCENARIO HALF_RATE_SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 half=$3 prog=$4 work=$5
. "$(dirname "$0")/example_checks.sh"
rm -rf "$work" && mkdir -p "$work"
steps=4 n=2 layers=2 tokens=512 hidden=512 epg=2
args=(--steps $steps --layers $layers --tokens $tokens --hidden $hidden --experts-per-gpu $epg)
run_example a2a "$scenario" "$prog" "${args[@]}"
run_example half "$half" "$prog" "${args[@]}"
run_example p2p "$scenario" "$prog" "${args[@]}" --exchange sendrecv
capacity=$(((5 * tokens + 4 * n * epg - 1) / (4 * n * epg)))
grep -q "^# expert_parallel: $n GPU(s) x $epg expert(s) .* $tokens tokens per GPU, capacity $capacity," "$work/a2a.out" ||
    fail "header: $(head -1 "$work/a2a.out"), expected capacity $capacity"
setup=$((n * layers * (1 + 2 * epg)))
kernels=$((setup + steps * n * (1 + layers * (3 + epg) + layers * (1 + 2 * epg))))
gemms=$((steps * n * layers * (1 + 2 * epg)))
kernel_counts a2a $kernels $gemms $((steps * n)) $((steps * 2 * layers))
kernel_counts p2p $kernels $gemms $((steps * n + steps * 2 * layers * n)) $((steps * 2 * layers * n * (n - 1)))
# every exchange sends epg x capacity token slots of hidden floats to each other GPU
# per GPU and step: a memset of the dropped count and, per layer, of the fill counts and the send
# buffer; the dropped count's copy, and with send/receive a local copy per exchange
for run in a2a:1 p2p:$((1 + 2 * layers)); do
    check_link_floor ${run%:*} 'gpu0>nvs0' $((steps * 2 * layers * (n - 1) * epg * capacity * hidden * 4))
    check_serial_step ${run%:*} $setup $n $steps $((1 + 2 * layers)) ${run#*:}
done
check_half_rate a2a half $steps
echo ok
