#!/usr/bin/env bash
# Runs collectives_bench on the 2 x H200 scenario at every size of the
# committed real measurement (bench/real/data/collectives_h200x2.txt) and
# compares each operation's time with the real one. Prints the table
# (predicted, measured, error); fails when any figure at 64 MiB or above is
# more than 10 % off, or when a real row has no simulated counterpart.
# Smaller sizes are printed, not checked.
# usage: check_nccl_vs_real.sh HYSIM SCENARIO BENCH REAL_FILE
set -euo pipefail
hysim=$1 scenario=$2 bench=$3 real=$4
sim=""
for size in $(awk '!/^#/ && NF == 5 { print $2 }' "$real" | sort -un); do
  sim+=$("$hysim" run "$scenario" -- "$bench" -g 2 -b "$size" -n 2 -w 1 | awk '!/^#/ && NF == 5')
  sim+=$'\n'
done
printf '%s' "$sim" | awk -v real="$real" '
  BEGIN {
    while ((getline line < real) > 0) {
      if (line ~ /^#/) continue
      split(line, f)
      if (length(f) == 5) { want[f[1] " " f[2]] = f[3]; order[++n] = f[1] " " f[2] }
    }
  }
  NF == 5 { got[$1 " " $2] = $3 }
  END {
    printf "%-14s %12s %12s %12s %8s\n", "op", "size(B)", "hysim(us)", "real(us)", "error"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, kk, " ")
      if (!(k in got)) { print "no simulated figure for " k; bad++; continue }
      err = (got[k] - want[k]) / want[k]
      mark = kk[2] >= 67108864 ? "" : "  (not checked)"
      printf "%-14s %12d %12.2f %12.2f %+7.1f%%%s\n", kk[1], kk[2], got[k], want[k], 100 * err, mark
      if (kk[2] >= 67108864) { checked++; if (err < -0.10 || err > 0.10) bad++ }
    }
    if (checked < 21) { print "expected 21 checked figures (7 ops x 64M, 256M, 1G), got " checked + 0; exit 1 }
    if (bad) { print bad " figure(s) at 64 MiB or above off by more than 10 %"; exit 1 }
    print "ok"
  }'
