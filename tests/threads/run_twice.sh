# Sourced by the check_*.sh scripts of tests/threads, which set hysim,
# scenario, prog, work, name (the program's name in its "NAME MODE done"
# line) and fail().
#
# run_twice MODE: runs PROGRAM MODE under `hysim run SCENARIO` twice, a
# minute at most each (a deadline read on the real clock instead of the
# simulated one may lie years ahead); each run must succeed, print
# "NAME MODE done" and no sanitizer report, and both must print the same.
# Their output stays in WORK/MODE.out, .err and WORK/MODE.again.out, .err.
run_twice() {
  local mode=$1 run
  for run in "$mode" "$mode.again"; do
    timeout 60 "$hysim" run "$scenario" -- "$prog" "$mode" >"$work/$run.out" 2>"$work/$run.err" ||
      { cat "$work/$run.out" "$work/$run.err"; fail "the $run run failed"; }
    grep -q "^$name $mode done" "$work/$run.out" || { cat "$work/$run.out"; fail "the $run run did not finish"; }
    ! grep -E "ERROR: [A-Za-z]+Sanitizer|runtime error" "$work/$run.err" || fail "sanitizer report in $run"
  done
  cmp "$work/$mode.out" "$work/$mode.again.out" || fail "two $mode runs print different things"
}
