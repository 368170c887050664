#!/usr/bin/env bash
# hysim's NCCL bus bandwidth by GPU count, beside the real figures there are:
# every collective on 2, 4 and 8 GPUs of one H200 server (examples/collectives_bench,
# one process), and all-reduce on 16 and 64 GPUs (2 and 8 servers of 8, 8 x 400G
# RoCE rails; examples/multiprocess_allreduce, one process per server), at
# 64 MiB and 1 GiB. Real: bench/real/data/collectives_h200x4.txt (2 and 4 GPUs,
# NVLS off, as tests/e2e/h200x4.yaml says). 8 GPUs twice: NVLS as NCCL would
# choose it (the scenario's default), then with NCCL_NVLS_ENABLE=0 ("8-off").
# usage: bench/nccl/gpu_counts.sh [BUILD_DIR]   (about two minutes on 2 cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
hysim=$build/bin/hysim real=$root/bench/real/data/collectives_h200x4.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/count: 2/count: 8/; s/^name: .*/name: 8 servers, 64 x H200, 8 x 400G RoCE rail-optimised/' \
  "$root/scenarios/h200x16-2srv.yaml" >"$work/h200x64.yaml"
real_busbw() { # n op size
  awk -v n="$1" -v op="$2" -v s="$3" '/^## /{ take = index($0, "one process, " n " GPUs") > 0; next }
    take && $1 == op && $2 == s { print $5; exit }' "$real"
}
echo "# $(date -u +%F) hysim $(git -C "$root" rev-parse --short HEAD); busbw GB/s (real where measured)"
printf "%5s %-14s %12s %10s %10s\n" GPUs op size hysim real
for run in 2 4 8 8-off; do
  n=${run%-off} nvls=1
  [[ $run == *-off ]] && nvls=0
  scenario=$root/tests/e2e/h200x$n.yaml
  [[ $n -eq 8 ]] && scenario=$root/scenarios/h200x8.yaml
  for size in 67108864 1073741824; do
    NCCL_NVLS_ENABLE=$nvls "$hysim" run "$scenario" -- "$build/bin/collectives_bench" -g "$n" -b "$size" -n 2 -w 1 \
      2>/dev/null | awk '!/^#/ && NF == 5 { print $1, $5 }' | while read -r op busbw; do
        printf "%5s %-14s %12d %10.1f %10s\n" "$run" "$op" "$size" "$busbw" "$(real_busbw "$n" "$op" "$size")"
      done
  done
done
for spec in "16 $root/scenarios/h200x16-2srv.yaml 2" "64 $work/h200x64.yaml 8"; do
  read -r n scenario procs <<<"$spec"
  rm -f "$work/uid"
  "$hysim" run "$scenario" -- "$build/bin/multiprocess_allreduce" -N "$procs" -i "$work/uid" -b 64M -e 1G -f 16 -n 2 -w 1 \
    2>/dev/null | awk -v n="$n" '!/^#/ && NF == 6 { printf "%5d %-14s %12d %10.1f %10s\n", n, "allreduce", $1, $6, "" }'
done
