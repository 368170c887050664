#!/usr/bin/env bash
# Strangers on hysimd's socket while the program runs (tests/reliability/stranger.py), each against a clean run
# of the same program: the program's output must be the clean run's, the run must not wait for the stranger,
# and hysim's peak memory must stay within 32 MiB of the clean run's.
#   churn   1,200 connect-and-close under `ulimit -n 256` (the poll set kept every connection: poll() failed
#           past the limit and the loop spun for good)
#   fds     300 silent connections held, renewed every second, under `ulimit -n 128`: past the open-file limit
#           each is accepted and closed at once (accept failed with EMFILE: the loop spun)
#   silent  300 silent connections without that limit: past 256 unregistered at once they are refused; the
#           others never hold the simulated time (one silent connection held the run for 10 s, each renewal again)
#   flood   60 connections announcing 16 MiB frames: refused at their header (they took hysim to 1.07 GB)
# usage: check_hostile_connections.sh HYSIM SCENARIO BENCH WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 bench=$3 work=$4
source "$(dirname "$0")/lib.sh"
stranger=$(cd "$(dirname "$0")" && pwd)/stranger.py
command -v python3 >/dev/null || fail "python3 is not installed"
rm -rf "$work" && mkdir -p "$work"
args="-b 1M -e 8M"
same() { grep -v "wall time\|refused\|stopped [0-9]* process\|^churn:\|^flood:" "$1" | grep -v "^hysim: [0-9]* process"; }
peak() { sed -n 's/.*peak memory \([0-9]*\) MiB.*/\1/p' "$1"; }
timeout 120 "$hysim" run "$scenario" -- "$bench" $args >"$work/clean.out" 2>&1 || { cat "$work/clean.out"; fail "the clean run failed"; }
clean_peak=$(peak "$work/clean.out")
[[ -n $clean_peak ]] || fail "no peak memory in the clean run's summary"

# run NAME LIMIT PROGRAM...: the run under `ulimit -n LIMIT`, then the checks every case shares
run() {
  local name=$1 limit=$2 start
  shift 2
  start=$(now)
  ( ulimit -n "$limit"; timeout 120 "$hysim" run "$scenario" -- sh -c "$*" ) >"$work/$name.out" 2>&1 ||
    { tail -20 "$work/$name.out"; fail "$name: the run failed (or hung)"; }
  echo "$name: $(elapsed "$start") s of wall time, peak memory $(peak "$work/$name.out") MiB (clean: $clean_peak)"
  diff <(same "$work/clean.out") <(same "$work/$name.out") || fail "$name: the program's run differs from the clean run"
  (( $(peak "$work/$name.out") <= clean_peak + 32 )) || fail "$name: hysim's peak memory grew past the clean run's + 32 MiB"
}
quiet="env -u LD_PRELOAD" # the stranger's clocks and sleeps are the machine's

run churn 256 "python3 $stranger churn 1200 && exec $bench $args"
grep -q "^churn: 1200 connections refused and closed" "$work/churn.out" || fail "churn: the connections were not all refused"
grep -q "1200 that did not register first" "$work/churn.out" || fail "churn: the summary does not count the refusals"

# silent NAME LIMIT: 300 silent connections the stranger would hold for 60 s; the run must end long before,
# closing strangers to make room, and take the stranger along
silent() {
  local name=$1 start
  start=$(now)
  run "$name" "$2" "$quiet python3 $stranger \$HYSIM_ENDPOINT silent 300 60 & $quiet sleep 0.5; exec $bench $args"
  awk -v t="$(elapsed "$start")" 'BEGIN { exit !(t < 30) }' || fail "$name: the run waited for the silent connections"
  grep -q "[1-9][0-9]* closed to make room" "$work/$name.out" || fail "$name: no stranger was closed to make room"
  grep -q "stopped 1 process the program left running" "$work/$name.out" || fail "$name: the stranger outlived the run"
}
silent fds 128     # past the open-file limit
silent silent 4096 # past 256 unregistered

run flood 1024 "$quiet python3 $stranger \$HYSIM_ENDPOINT flood 60 && exec $bench $args"
grep -q "^flood: 60 of 60 connections closed by hysimd" "$work/flood.out" || fail "flood: hysimd kept connections"
grep -q "60 oversized frames" "$work/flood.out" || fail "flood: the summary does not count the oversized frames"
echo "hostile connections: ok"
