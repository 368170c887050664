#!/usr/bin/env bash
# bench/interpose/driver_memory (C, the driver API alone, hysim's
# libcuda.so.1) under hysim run on SCENARIO (one H100): its answers about
# memory, streams, events and pointers must be the real H100's (REAL,
# bench/real/driver_launch_real.sh) line for line; its CUDA-event times,
# those of the real run's two passes within what hysim's copy and memset
# models are documented to reach (bench/RESULTS.md, "Host copies", "Pitched
# memory"): 64 MiB copies each way and within the GPU 10 %, the memset 25 %;
# the empty kernel (no profile) the scenario's default duration plus at most
# its launch gap.
# usage: check_driver_memory.sh HYSIM SCENARIO DRIVER_MEMORY REAL
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 real=$4
gap=$(sed -n 's/.*kernel_gap_us: *\([0-9.]*\).*/\1/p' "$scenario")
default=$(sed -n 's/.*default_kernel_us: *\([0-9.]*\).*/\1/p' "$scenario")
out=$("$hysim" run "$scenario" -- "$prog" 2>&1) || { echo "$out"; echo "FAIL: hysim run"; exit 1; }
answers() { grep ' = '; }
if ! diff <(answers <"$real") <(echo "$out" | answers); then
    echo "FAIL: hysim's answers (>) differ from the real H100's (<)"; exit 1
fi
awk -v gap="${gap:-1}" -v d="${default:-10}" '
  NR == FNR { if ($1 == "time:" || $1 == "again:") { k = $0; sub(/^[a-z]+: */, "", k); sub(/ +[0-9.]+ us$/, "", k)
                v = $(NF - 1) + 0
                if (!(k in lo) || v < lo[k]) lo[k] = v
                if (!(k in hi) || v > hi[k]) hi[k] = v }
              next }
  $1 == "time:" { k = $0; sub(/^time: */, "", k); sub(/ +[0-9.]+ us$/, "", k); got = $(NF - 1); rows++
    if (k ~ /kernel/) { if (got < d - 0.0005 || got > d + gap + 0.0005) { print k ": " got " us, want " d " .. " d + gap; bad++ }; next }
    tol = k ~ /memset/ ? 0.25 : 0.10
    if (!(k in lo)) { print k ": no real figure"; bad++; next }
    if (got < lo[k] * (1 - tol) || got > hi[k] * (1 + tol)) { printf "%s: %s us, real %s .. %s (%d %%)\n", k, got, lo[k], hi[k], 100 * tol; bad++ }
    else printf "  %s: %s us, real %s .. %s\n", k, got, lo[k], hi[k] }
  END { if (rows != 5) { print "FAIL: " rows " timed rows, want 5"; exit 1 }
        if (bad) { print "FAIL"; exit 1 }
        print "ok: answers as the H100'"'"'s, times within the copy and memset models'"'"' reach" }' "$real" - <<<"$out" ||
    { echo "$out"; exit 1; }
