#!/usr/bin/env bash
# allreduce_bench with one thread per GPU (-t 1: ncclCommInitRank in each
# thread, a mutex + condition variable barrier around each size, as
# nccl-tests -t) against one thread driving both GPUs (-t 0), under
# host_time: zero: the GPUs do the same work, so every row must be the same,
# and the threaded run must finish (threads blocked in the barrier count as
# waiting) and repeat itself exactly.
# usage: check_allreduce_threads.sh HYSIM SCENARIO BENCH WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 bench=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
args=(-g 2 -b 1M -e 64M -f 4 -n 5 -w 1)
for run in t0:0 t1:1 t1again:1; do
  timeout 120 "$hysim" run "$scenario" -- "$bench" "${args[@]}" -t "${run#*:}" >"$work/${run%:*}.out" 2>"$work/${run%:*}.err" ||
    { cat "$work/${run%:*}.err"; echo "FAIL: ${run%:*} exited $?"; exit 1; }
done
rows() { grep -v '^#' "$1"; }
cat "$work/t1.out"
[[ $(rows "$work/t1.out" | wc -l) -eq 4 ]] || { echo "FAIL: expected 4 rows (1M, 4M, 16M, 64M)"; exit 1; }
diff <(rows "$work/t0.out") <(rows "$work/t1.out") || { echo "FAIL: one thread per GPU timed differently"; exit 1; }
cmp -s "$work/t1.out" "$work/t1again.out" || { echo "FAIL: two threaded runs differ"; exit 1; }
echo ok
