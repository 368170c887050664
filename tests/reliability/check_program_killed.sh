#!/usr/bin/env bash
# One of the two program processes (server 1) is killed with SIGKILL: hysim
# must name the process, its server and its ranks, stop the other process,
# exit with status 1 (the program failed: the simulation stops because of it)
# and leave no process behind.
# usage: check_program_killed.sh HYSIM SCENARIO PROGRAM WORKDIR
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
source "$(dirname "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"

"$hysim" run "$scenario" -- "$prog" busy 60 "$work" 2>"$work/stderr" &
hysim_pid=$!
for s in 0 1; do
  wait_for_file "$work/pid.$s" 30 || { cat "$work/stderr"; kill -9 $hysim_pid; fail "server $s never started"; }
done
pid0=$(cat "$work/pid.0") pid1=$(cat "$work/pid.1")

kill -9 "$pid1"
start=$(now)
wait_gone $hysim_pid 15 || { kill -9 $hysim_pid "$pid0"; fail "hysim still runs 15 s after a process was killed"; }
wait $hysim_pid
status=$?
took=$(elapsed "$start")
cat "$work/stderr"
echo "hysim exited with status $status after $took s"
[[ $status -eq 1 ]] || fail "expected exit status 1 (the program failed), got $status"
grep -q "process $pid1 (server 1, [^;]*; GPUs/ranks 1..1) killed by signal 9" "$work/stderr" ||
  fail "no message naming process $pid1, server 1, ranks 1..1 and signal 9"
for p in "$pid0" "$pid1" $hysim_pid; do
  alive "$p" && { kill -9 "$p"; fail "process $p is still running"; }
done
echo ok
