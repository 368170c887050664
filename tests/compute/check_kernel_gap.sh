#!/usr/bin/env bash
# bench/compute/kernel_gap under hysim on tests/compute/h100.yaml: every
# kernel it queues takes the default duration (the spin kernels have no
# profile entry), so a kernel launched on a stream behind another takes that
# plus the scenario's launch gap per kernel, by the program's own CUDA events,
# and the same kernels replayed as a CUDA graph take the duration alone.
# Then on CALLS_SCENARIO (host_time: calls): an idle launch and a synchronize
# take the launch's host cost, the submission latency, the kernel and the
# wake-up latency (interpose/core/api_cost.h).
# usage: check_kernel_gap.sh HYSIM SCENARIO KERNEL_GAP CALLS_SCENARIO API_COST_H
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 calls_scenario=$4 api_cost=$5
gap=$(sed -n 's/.*kernel_gap_us: *\([0-9.]*\).*/\1/p' "$scenario")
kernel=$(sed -n 's/.*default_kernel_us: *\([0-9.]*\).*/\1/p' "$scenario")
[ -n "$gap" ] && [ -n "$kernel" ] || { echo "need compute.kernel_gap_us and default_kernel_us in $scenario"; exit 1; }
out=$("$hysim" run "$scenario" -- "$prog" -n 20 2>&1)
echo "$out"
awk -v gap="$gap" -v k="$kernel" '
  $1 == "stream" || $1 == "graph" {
    want = $1 == "stream" ? k + gap : k; rows[$1]++
    if ($4 - want > 0.0005 || want - $4 > 0.0005) { print $0 ": " $4 " us per kernel, want " want; bad++ } }
  END {
    if (rows["stream"] != 12 || rows["graph"] != 12) { print "want 12 stream and 12 graph rows"; exit 1 }
    if (bad) { print bad " row(s) off"; exit 1 }
    printf "ok: %g us per kernel on a stream, %g in a graph\n", k + gap, k }' <<<"$out"

# HS_CALL_KERNEL_LAUNCH's ns (the X-macro row), HS_SUBMIT_NS, HS_WAKE_NS
launch=$(sed -n 's/.*X(HS_CALL_KERNEL_LAUNCH, *\([0-9]*\),.*/\1/p' "$api_cost")
submit=$(awk '$1 == "#define" && $2 == "HS_SUBMIT_NS" { print $3 }' "$api_cost")
wake=$(awk '$1 == "#define" && $2 == "HS_WAKE_NS" { print $3 }' "$api_cost")
[ -n "$launch" ] && [ -n "$submit" ] && [ -n "$wake" ] || { echo "launch, submit or wake figure not found in $api_cost"; exit 1; }
grep -q 'host_time: calls' "$calls_scenario" || { echo "$calls_scenario: not host_time: calls"; exit 1; }
out=$("$hysim" run "$calls_scenario" -- "$prog" -n 20 2>&1)
echo "$out" | grep 'idle launch'
awk -v k="$kernel" -v launch="$launch" -v submit="$submit" -v wake="$wake" '
  /^idle launch \+ synchronize: median/ { got = $6 }
  END {
    want = (launch + submit + wake) / 1e3 + k
    if (got == "") { print "no idle launch line"; exit 1 }
    if (got - want > 0.0005 || want - got > 0.0005) { print "idle launch + synchronize " got " us, want " want; exit 1 }
    printf "ok: idle launch + synchronize %g us = launch %g + submission %g + kernel %g + wake-up %g\n", got,
           launch / 1e3, submit / 1e3, k, wake / 1e3 }' <<<"$out"
