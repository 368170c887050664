#!/usr/bin/env bash
# nccl_barrier.c under `hysim run`: eight threads, one GPU each, each
# iteration an all-reduce, a stream sync and nccl-tests' mutex + condition
# variable Barrier(), must finish twice with byte-identical output, and
# print the same all-reduce ends and host clocks as the same work issued
# from the main thread alone (ncclCommInitAll, a group per iteration).
# usage: check_nccl_barrier.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
NGPU=8 ITERS=20 # nccl_barrier.c's
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
for run in threads threads.again serial; do
  mode=${run%.again}
  if ! "$hysim" run "$scenario" -- "$prog" "$mode" >"$work/$run.out" 2>"$work/$run.err"; then
    cat "$work/$run.err"; fail "the $run run failed"
  fi
  grep -q "^nccl_barrier $mode done" "$work/$run.out" || { cat "$work/$run.out"; fail "the $run run did not finish"; }
done
cmp "$work/threads.out" "$work/threads.again.out" || fail "two threads runs print different things"
n=$(grep -c 'all-reduce done' "$work/threads.out")
((n == NGPU * ITERS)) || fail "$n all-reduce lines, not $((NGPU * ITERS))"
# every iteration takes time: the syncs returned strictly later each time
awk '/every sync returned/ { t = $7; sub(/^\+/, "", t); if (t + 0 <= last + 0) bad = 1; last = t } END { exit bad }' \
  "$work/threads.out" || fail "the host clock did not move on every iteration"
diff <(grep -v '^nccl_barrier' "$work/serial.out") <(grep -v '^nccl_barrier' "$work/threads.out") ||
  fail "one thread per GPU and the main thread alone give different times"
tail -3 "$work/threads.out"
echo ok
