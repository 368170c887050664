#!/usr/bin/env bash
# A long stretch of simulation (one large all-reduce over 8 GPUs in fine NVLink
# segments, tens of seconds uninterrupted) is interrupted one of three ways:
#   TERM, INT  the signal goes to hysim: it must stop within 10 s with a
#              message naming the signal, exit with status 3, and leave no
#              process behind;
#   KILL       the program process is killed with SIGKILL: hysim must report
#              it (process, server, ranks, signal 9) within 10 s, exit with
#              status 1 (the program failed) and leave no process behind.
# Before hysimd looked at signals and children inside a stretch, both took as
# long as the stretch itself.
# usage: check_long_run.sh HYSIM SCENARIO PROGRAM WORKDIR TERM|INT|KILL
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4 how=$5
source "$(dirname "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"

"$hysim" run "$scenario" -- "$prog" long 4096 "$work" 2>"$work/stderr" &
hysim_pid=$!
wait_for_file "$work/pid.0" 60 || { cat "$work/stderr"; kill -9 $hysim_pid; fail "the program never started"; }
prog_pid=$(cat "$work/pid.0")
sleep 1 # the all-reduce is issued: hysimd is inside its stretch of simulation
alive $hysim_pid || { cat "$work/stderr"; fail "hysim ended before it was interrupted"; }

case $how in
  TERM | INT) kill -s "$how" $hysim_pid ;;
  KILL) kill -9 "$prog_pid" ;;
  *) fail "unknown way to interrupt: $how" ;;
esac
start=$(now)
wait_gone $hysim_pid 60 || { kill -9 $hysim_pid "$prog_pid"; fail "hysim still runs 60 s after $how"; }
wait $hysim_pid
status=$?
took=$(elapsed "$start")
cat "$work/stderr"
echo "hysim exited with status $status $took s after $how"
awk -v t="$took" 'BEGIN { exit !(t < 10.0) }' || fail "it took $took s, more than 10 s"
want=3
[[ $how == KILL ]] && want=1
[[ $status -eq $want ]] || fail "expected exit status $want, got $status"
case $how in
  TERM) grep -q "^hysim: simulation failed: stopped by signal 15 " "$work/stderr" ||
          fail "no 'stopped by signal 15' message" ;;
  INT) grep -q "^hysim: simulation failed: stopped by signal 2 " "$work/stderr" ||
         fail "no 'stopped by signal 2' message" ;;
  KILL) grep -q "process $prog_pid (server 0, [^;]*; GPUs/ranks 0..7) killed by signal 9" "$work/stderr" ||
          fail "no message naming process $prog_pid, server 0, ranks 0..7 and signal 9" ;;
esac
grep -q "all-reduce of .* completed" "$work/stderr" && fail "the all-reduce completed: the run was not interrupted"
for p in "$prog_pid" $hysim_pid; do
  alive "$p" && { kill -9 "$p"; fail "process $p is still running"; }
done
strays=$(pgrep -f -- "long 4096 $work" || true)
[[ -z $strays ]] || { kill -9 $strays; fail "processes left behind: $strays"; }
echo ok
