#!/usr/bin/env bash
# hysim's all-reduce on 2 and 4 GPUs of one H200 server against nccl-tests'
# own figures (all_reduce_perf, NVLS off: bench/real/data/nccl_all_reduce_h200x4.txt),
# 64 MiB and above, out-of-place and in-place time each. Fails when a figure is
# more than BOUND % off or a real row has no simulated counterpart.
# usage: check_nccl_tests_allreduce.sh HYSIM SCENARIO_DIR BENCH REAL_FILE [BOUND]
#        (SCENARIO_DIR holds h200x2.yaml and h200x4.yaml)
set -euo pipefail
hysim=$1 scenarios=$2 bench=$3 real=$4 bound=${5:-5}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
# the real rows: GPU count (the table's "-g N"), size, out-of-place and in-place µs
awk '/^#/ && match($0, /-g [0-9]+/) { n = substr($0, RSTART + 3, RLENGTH - 3); next }
     !/^#/ && NF >= 13 && $1 >= 67108864 { print n, $1, $6, $10 }' "$real" >"$table"
[[ -s $table ]] || { echo "no all-reduce rows of 64 MiB and above in $real"; exit 1; }
while read -r n size _ _; do
  got=$("$hysim" run "$scenarios/h200x$n.yaml" -- "$bench" -g "$n" -b "$size" -n 2 -w 1 2>/dev/null |
    awk '$1 == "allreduce" { print $3 }')
  echo "$n $size ${got:-missing}"
done <"$table" | paste -d' ' "$table" - |
  awk -v bound="$bound" '
    { if ($7 == "missing") { print "no simulated figure for " $1 " GPUs, " $2 " B"; bad++; next }
      for (c = 3; c <= 4; c++) {
        err = 100 * ($7 - $c) / $c
        flag = (err > bound || err < -bound) ? "  > " bound " %" : ""
        printf "%d GPUs %11s B  %-12s real %9.2f us  hysim %9.2f us  %+6.1f%%%s\n", $1, $2,
               c == 3 ? "out-of-place" : "in-place", $c, $7, err, flag
        if (flag != "") bad++
      }
      rows++ }
    END { if (rows < 8) { print "expected 8 sizes (4 on 2 GPUs, 4 on 4), got " rows; exit 1 }
          if (bad) { print bad " figure(s) off by more than " bound " %"; exit 1 }
          print "ok" }'
