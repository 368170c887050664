#!/usr/bin/env bash
# join_workers.c under `hysim run`: the main thread, which issued GPU work,
# pthread_joins one worker per GPU. The run must finish, the joins must
# return at the simulated time the workers' last synchronisation returned
# (the host clock after them equals that of the same all-reduces issued and
# synchronised from the main thread, and lies one all-reduce sequence after
# the clock before them), and two runs must give the same output and report
# bytes. So must threads that join threads that they started, joined in
# turn by the main thread. So must a main thread that waits on a condition
# variable the workers signal before it joins them.
# usage: check_join_workers.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
for run in serial threads threads.again nested condvar; do
  mode=${run%.again}
  if ! "$hysim" run --out "$work/$run" "$scenario" -- "$prog" "$mode" >"$work/$run.out" 2>"$work/$run.err"; then
    cat "$work/$run.err"; fail "the $run run failed"
  fi
  grep -q "^join_workers $mode done" "$work/$run.out" || { cat "$work/$run.out"; fail "the $run run did not finish"; }
done
cat "$work/threads.out"
clock() { sed -n "s/^host clock $2 the work: \([0-9]*\) ns$/\1/p" "$1"; }
before=$(clock "$work/threads.out" before) after=$(clock "$work/threads.out" after)
[[ -n $before && -n $after ]] || fail "no host clock lines"
(( after > before )) || fail "the joins returned at $after ns, not after the workers' all-reduces (from $before ns)"
[[ $after == $(clock "$work/serial.out" after) ]] ||
  fail "the joins returned at $after ns; the same work synchronised from one thread ends at $(clock "$work/serial.out" after) ns"
# the join returned when the last all-reduce sequence did: its duration, from the start events, to within 1 µs
longest=$(awk '/^gpu [0-9] done after/ {if ($5 > m) m = $5} END {printf "%.0f", m * 1e6}' "$work/threads.out")
(( longest > 0 && (after - before - longest) * (after - before - longest) <= 1000000 )) ||
  fail "the joins took $((after - before)) ns of host time, the all-reduces $longest ns"
diff <(grep '^gpu' "$work/serial.out") <(grep '^gpu' "$work/threads.out") ||
  fail "one thread per GPU gave other event times than one thread for all"
diff <(grep -v done "$work/threads.out") <(grep -v done "$work/nested.out") ||
  fail "joins of joins gave other times than joins of the workers"
cmp "$work/threads.out" "$work/threads.again.out" || fail "two runs of the threads print different things"
cmp "$work/threads/report.json" "$work/threads.again/report.json" ||
  { diff "$work/threads/report.json" "$work/threads.again/report.json" | head; fail "two runs' reports differ"; }
cmp "$work/threads/trace.json" "$work/threads.again/trace.json" || fail "two runs' traces differ"
diff <(grep -v done "$work/threads.out") <(grep -v done "$work/condvar.out") ||
  fail "a wait on a condition variable the workers signal gave other times than joins of them"
echo ok
