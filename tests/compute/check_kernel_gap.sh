#!/usr/bin/env bash
# bench/compute/kernel_gap under hysim on tests/compute/h100.yaml: every
# kernel it queues takes the default duration (the spin kernels have no
# profile entry), so a kernel launched on a stream behind another takes that
# plus the scenario's launch gap per kernel, by the program's own CUDA events,
# and the same kernels replayed as a CUDA graph take the duration alone.
# usage: check_kernel_gap.sh HYSIM SCENARIO KERNEL_GAP
set -euo pipefail
hysim=$1 scenario=$2 prog=$3
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
