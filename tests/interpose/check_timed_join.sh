#!/usr/bin/env bash
# timed_join_test.c under `hysim run` (timed_join.yaml): the semantics run must
# pass; a timed join whose deadline comes while the joined thread still works
# on the GPU must time out at the deadline (the late runs check their own
# simulated times); one whose joined thread never touched the GPU must end
# the run with the "not supported yet" message and a failure status, never
# return to the program; and two semantics runs must
# print the same. Each run gets a minute: a deadline read on the real clock
# instead of the simulated one may lie years ahead.
# usage: check_timed_join.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
for run in semantics semantics.again; do
  timeout 60 "$hysim" run "$scenario" -- "$prog" semantics >"$work/$run.out" 2>"$work/$run.err" ||
    { cat "$work/$run.out" "$work/$run.err"; fail "the $run run failed"; }
  grep -q "^timed_join semantics: ok$" "$work/$run.out" || { cat "$work/$run.out"; fail "$run did not finish"; }
done
cat "$work/semantics.out"
cmp "$work/semantics.out" "$work/semantics.again.out" || fail "two semantics runs print different things"
for kind in timed clock; do
  name=pthread_${kind}join_np
  timeout 60 "$hysim" run "$scenario" -- "$prog" late "$kind" >"$work/late_$kind.out" 2>"$work/late_$kind.err" ||
    { cat "$work/late_$kind.out" "$work/late_$kind.err"; fail "$name timing out on a running thread failed the run"; }
  grep -q "^timed_join late: ok$" "$work/late_$kind.out" || { cat "$work/late_$kind.out"; fail "late $kind did not finish"; }
  cat "$work/late_$kind.out"
  grep -E "ERROR: [A-Za-z]+Sanitizer|runtime error" "$work/late_$kind.err" && fail "sanitizer report in late $kind"
done
if timeout 60 "$hysim" run "$scenario" -- "$prog" idle >"$work/idle.out" 2>"$work/idle.err"; then
  cat "$work/idle.out"; fail "timing out on a thread hysimd does not see did not fail the run"
fi
grep -q "^timed_join idle: joining$" "$work/idle.out" || { cat "$work/idle.out" "$work/idle.err"; fail "idle never joined"; }
grep -q "returned" "$work/idle.out" && fail "the idle join returned: $(grep returned "$work/idle.out")"
grep -q "^hysim: pthread_timedjoin_np timing out on a running thread is not supported yet" "$work/idle.err" ||
  { cat "$work/idle.err"; fail "no clear message from the idle join"; }
echo ok
