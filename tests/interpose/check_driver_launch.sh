#!/usr/bin/env bash
# bench/interpose/driver_launch (nvcc, -lcuda: hysim's libcuda.so.1 at run
# time) under hysim run on SCENARIO: its answers about the module's
# functions (same handle twice, attributes, occupancy, name, a pointer's
# device, a linked module, a library's kernel, a tensor map) must be the
# real H100's (REAL, bench/real/driver_launch_real.sh) line for line, and
# the active clusters within 4 % (a model of the H100's answers); each launch takes its kernel's time plus the scenario's
# launch gap, by the program's own events: driver_kernel its entry in the
# scenario's profile database (PROFILES), plain and as clusters of
# cuLaunchKernelEx, driver_kernel_other (no entry) the default duration.
# usage: check_driver_launch.sh HYSIM SCENARIO DRIVER_LAUNCH REAL PROFILES
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 real=$4 profiles=$5
gap=$(sed -n 's/.*kernel_gap_us: *\([0-9.]*\).*/\1/p' "$scenario")
default=$(sed -n 's/.*default_kernel_us: *\([0-9.]*\).*/\1/p' "$scenario")
profiled=$(awk -F, '$2 == "driver_kernel" && $3 == 132 && $6 == 128 { print $10 }' "$profiles")
[ -n "$gap" ] && [ -n "$default" ] && [ -n "$profiled" ] ||
    { echo "need kernel_gap_us and default_kernel_us in $scenario, driver_kernel in $profiles"; exit 1; }
out=$("$hysim" run "$scenario" -- "$prog" 2>&1) || { echo "$out"; echo "FAIL: hysim run"; exit 1; }
answers() { grep -v '^#' | grep -v 'per launch' | grep -v '^hysim:' | grep -v '^active clusters'; }
if ! diff <(answers <"$real") <(echo "$out" | answers); then
    echo "FAIL: hysim's answers (>) differ from the real H100's (<)"; exit 1
fi
awk 'NR == FNR { if (/^active clusters/) real[$4 " " $6] = $NF; next }
  /^active clusters/ { n++; k = $4 " " $6
    if (!(k in real) || $NF < real[k] * 0.96 || $NF > real[k] * 1.04) { print "FAIL: " $0 ", real " real[k]; bad++ } }
  END { if (n != 12 || bad) { print "FAIL: " n " active-cluster answers, " bad + 0 " off"; exit 1 } }' "$real" - <<<"$out" ||
    { echo "$out"; exit 1; }
awk -v gap="$gap" -v d="$default" -v p="$profiled" '
  / per launch$/ { rows++; want = $0 ~ /driver_kernel_other/ ? d + gap : p + gap
    got = $(NF - 3); if (got - want > 0.0005 || want - got > 0.0005) { print $0 ": want " want " us"; bad++ } }
  END { if (rows != 3) { print "FAIL: " rows " timed rows, want 3"; exit 1 }
        if (bad) { print "FAIL"; exit 1 }
        printf "ok: answers as the H100'"'"'s; %g us per profiled launch, %g per default one\n", p + gap, d + gap }' <<<"$out" ||
    { echo "$out"; exit 1; }
