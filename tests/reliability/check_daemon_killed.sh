#!/usr/bin/env bash
# hysim (and with it hysimd) is killed with SIGKILL while the program computes
# on the host without calling CUDA: the program must exit within 2 s, saying
# which endpoint it lost.
# usage: check_daemon_killed.sh HYSIM SCENARIO PROGRAM WORKDIR [unix|tcp]
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4 endpoint=${5:-unix}
source "$(dirname "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"

"$hysim" run --endpoint "$endpoint" "$scenario" -- "$prog" busy 60 "$work" 2>"$work/stderr" &
hysim_pid=$!
wait_for_file "$work/pid.0" 30 || { cat "$work/stderr"; kill -9 $hysim_pid; fail "the program never started"; }
prog_pid=$(cat "$work/pid.0")
alive "$prog_pid" || fail "program $prog_pid is not running"

kill -9 $hysim_pid
start=$(now)
wait $hysim_pid 2>/dev/null
if ! wait_gone "$prog_pid" 5; then
  kill -9 "$prog_pid"
  fail "the program (pid $prog_pid) still runs 5 s after hysim was killed"
fi
took=$(elapsed "$start")
cat "$work/stderr"
echo "the program exited $took s after hysim was killed"
awk -v t="$took" 'BEGIN { exit !(t < 2.0) }' || fail "it took $took s, more than 2 s"
grep -Eq "^hysim: lost connection to hysimd at $endpoint:[^ ]+: " "$work/stderr" ||
  fail "no 'lost connection to hysimd at $endpoint:...' message"
echo ok
