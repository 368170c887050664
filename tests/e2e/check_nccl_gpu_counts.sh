#!/usr/bin/env bash
# hysim's NCCL model on 2 and 4 GPUs of one server against the real figures of
# bench/real/data/collectives_h200x4.txt (examples/collectives_bench, one process,
# 64 MiB - 4 GiB), with no constant that depends on the GPU count
# (bench/nccl/fit_ring_model.py, docs/nccl.md "Bus bandwidth and the GPU count").
# Prints every figure; fails when an all-reduce is more than AR_BOUND % off, an
# all-gather or reduce-scatter more than RING_BOUND %, another collective more
# than OTHER_BOUND %, or a real row has no simulated counterpart.
# usage: check_nccl_gpu_counts.sh HYSIM SCENARIO_DIR BENCH REAL_FILE [AR_BOUND RING_BOUND OTHER_BOUND]
#        (SCENARIO_DIR holds h200x2.yaml and h200x4.yaml)
set -euo pipefail
hysim=$1 scenarios=$2 bench=$3 real=$4 ar=${5:-6} ring=${6:-10} other=${7:-20}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
for n in 2 4; do
  # the real rows of the section "## one process, N GPUs", 64 MiB and above
  awk -v n="$n" '/^## /{ take = index($0, "one process, " n " GPUs") > 0; next }
                 take && !/^#/ && NF == 5 && $2 >= 67108864 { print n, $1, $2, $3 }' "$real" >>"$table"
  for size in $(awk -v n="$n" '$1 == n { print $3 }' "$table" | sort -un); do
    "$hysim" run "$scenarios/h200x$n.yaml" -- "$bench" -g "$n" -b "$size" -n 2 -w 1 2>/dev/null |
      awk -v n="$n" '!/^#/ && NF == 5 { print "sim", n, $1, $2, $3 }' >>"$table"
  done
done
awk -v ar="$ar" -v ring="$ring" -v other="$other" '
  $1 == "sim" { got[$2 " " $3 " " $4] = $5; next }
  { want[$1 " " $2 " " $3] = $4; order[++n] = $1 " " $2 " " $3 }
  END {
    printf "%4s %-14s %12s %12s %12s %8s\n", "GPUs", "op", "size(B)", "hysim(us)", "real(us)", "error"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, f, " ")
      if (!(k in got)) { print "no simulated figure for " k; bad++; continue }
      err = 100 * (got[k] - want[k]) / want[k]
      bound = f[2] == "allreduce" ? ar : (f[2] == "allgather" || f[2] == "reducescatter") ? ring : other
      flag = (err > bound || err < -bound) ? "  > " bound " %" : ""
      printf "%4d %-14s %12s %12.2f %12.2f %+7.1f%%%s\n", f[1], f[2], f[3], got[k], want[k], err, flag
      if (flag != "") bad++
    }
    if (n < 50) { print "expected 56 real figures (7 ops x 4 sizes x 2 GPU counts), got " n; exit 1 }
    if (bad) { print bad " figure(s) off by more than their bound"; exit 1 }
    print "ok"
  }' "$table"
