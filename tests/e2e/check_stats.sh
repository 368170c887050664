#!/usr/bin/env bash
# `hysim run --stats DIR` on a 2-server run with background traffic: the four
# files are there; links.csv's utilisation is bytes×8/(rate × simulated time)
# for every link; the explicit background flow (repeated every 50 us for as
# long as the run lasts, which must not keep the run alive) has its bytes and takes at
# least bytes / NIC rate; nic0>sw0 carried at least the bytes of every
# finished flow from GPU 0 to the other server; the time series has one row per
# link at every multiple of the interval and adds up to no more than the
# link's bytes; a second run writes identical files, and the program's
# figures are the same without --stats.
# usage: check_stats.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
run() { # NAME [--stats DIR]: the program's output in NAME.out
    local name=$1
    shift
    "$hysim" run "$@" "$scenario" -- "$prog" -N 2 -i "$work/id" -b 8M -e 8M -n 1 -w 0 >"$work/$name.out" 2>"$work/$name.err"
}
run a --stats "$work/a"
run b --stats "$work/b"
run plain
# sampling and flow recording change no simulated time
cmp "$work/a.out" "$work/plain.out" || { echo "the program's figures differ with --stats"; exit 1; }
for f in links.csv flows.csv link_timeseries.csv summary.json; do
    [[ -s "$work/a/$f" ]] || { echo "$f missing or empty"; exit 1; }
    cmp "$work/a/$f" "$work/b/$f" || { echo "$f differs between two runs"; exit 1; }
done
d=$work/a
grep -q '"version": 1,' "$d/summary.json" || { echo "summary.json: no version 1"; exit 1; }
sim_ps=$(sed -n 's/.*"sim_time_ps": \([0-9]*\),.*/\1/p' "$d/summary.json")
interval_ps=$(sed -n 's/.*"sample_interval_ps": \([0-9]*\),.*/\1/p' "$d/summary.json")
[[ $sim_ps -gt 0 && $interval_ps -eq 5000000 ]] || { echo "summary: sim $sim_ps ps, interval $interval_ps ps"; exit 1; }

awk -F, -v sim="$sim_ps" 'NR == 1 { next }
  { want = $3 * 8 / ($2 * 1e-3 * sim); rows++
    if ((want - $4) > 1e-6 || ($4 - want) > 1e-6) { printf "%s: utilisation %s, arithmetic %.6f\n", $1, $4, want; bad++ } }
  END { if (rows < 20 || bad) { print "links.csv: " rows " rows, " bad + 0 " wrong"; exit 1 }
        print "links.csv: utilisation = bytes*8/(rate*time) on all " rows " links" }' "$d/links.csv"

nic0=$(awk -F, '$1 == "nic0>sw0" { print $3 }' "$d/links.csv")
awk -F, -v nic0="$nic0" 'NR == 1 { next }
  $7 == "background" && $2 == 0 && $3 == 2 && $5 == 0 { found++; dur = $6 - $5
    if ($4 != 1048576 || $6 == "") { print "explicit background flow: " $0; exit 1 }
    if (dur < 1048576 * 8 / 400e9 * 1e12) { print "background flow faster than the NIC: " dur " ps"; exit 1 } }
  $2 == 0 && ($3 == 2 || $3 == 3) && $6 != "" { gpu0 += $4 }
  $7 == "background" && $2 == 0 && $3 == 2 { repeats++ }
  END { if (found != 1) { print "explicit background flow not found"; exit 1 }
        if (repeats < 3) { print "the background flow repeated every 50 us ran " repeats + 0 " times"; exit 1 }
        if (gpu0 == 0 || nic0 < gpu0) { print "nic0>sw0 carried " nic0 " B, flows from GPU 0 off the server " gpu0 " B"; exit 1 }
        printf "flows.csv: background flow of 1 MiB took %.2f us (>= %.2f us at 400G); nic0>sw0 %d B >= %d B of GPU 0 flows\n",
               dur / 1e6, 1048576 * 8 / 400e3, nic0, gpu0 }' "$d/flows.csv"

links=$(($(wc -l < "$d/links.csv") - 1))
awk -F, -v links="$links" -v iv="$interval_ps" -v nic0="$nic0" 'NR == 1 { next }
  { n++; k = int((n - 1) / links) + 1
    if (int($1 * 1e6 + 0.5) != k * iv) { print "row " n ": time " $1 " us, expected " k * iv / 1e6; exit 1 } }
  $2 == "nic0>sw0" { sum += $3 * 400e9 / 8 * iv * 1e-12; samples++ }
  END { if (n % links) { print "rows not a whole number of samples"; exit 1 }
        if (samples < 2 || sum > nic0 * 1.000001 || sum < 0.5 * nic0) {
          print "nic0>sw0: " samples " samples adding up to " sum " B of " nic0; exit 1 }
        printf "link_timeseries.csv: %d samples x %d links; nic0>sw0 samples add up to %.0f of %d B\n",
               n / links, links, sum, nic0 }' "$d/link_timeseries.csv"
echo ok
