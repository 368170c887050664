#!/usr/bin/env bash
# thread_per_gpu.c under `hysim run`: one thread per GPU, each waiting on its
# own stream, must finish (the stall watchdog stops a run whose threads cannot
# get their work through) with the simulated times of the same work issued
# from one thread, twice over with the same bytes.
# usage: check_thread_per_gpu.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
for mode in serial threads threads; do
  out=$work/$mode.out
  [[ -e $out ]] && out=$work/$mode.again.out
  if ! "$hysim" run "$scenario" -- "$prog" "$mode" >"$out" 2>"$work/$mode.err"; then
    cat "$work/$mode.err"; echo "the $mode run failed"; exit 1
  fi
  grep -q "^thread_per_gpu $mode done" "$out" || { cat "$out"; echo "the $mode run did not finish"; exit 1; }
done
cat "$work/threads.out"
times() { grep -E "^(iteration|host clock)" "$1"; }
[[ $(times "$work/serial.out" | grep -c '^iteration') == 12 ]] || { echo "expected 12 event times"; exit 1; }
# every iteration ends later than the one before (the work was simulated, not skipped)
times "$work/serial.out" | awk '/^iteration/ && $4 == 0 {t[$2] = $7} END {if (!(t[0] > 0 && t[1] > t[0] && t[2] > t[1])) exit 1}' ||
  { echo "iterations do not take time"; exit 1; }
diff <(times "$work/serial.out") <(times "$work/threads.out") ||
  { echo "one thread per GPU gave other simulated times than one thread for all"; exit 1; }
cmp "$work/threads.out" "$work/threads.again.out" || { echo "two runs of the threads differ"; exit 1; }
echo ok
