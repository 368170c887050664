#!/usr/bin/env bash
# The progress line: never when stderr is not a terminal; at least once, with
# simulated time, wall time and events/s, during a run on a terminal (through script(1), when util-linux has it).
# usage: check_progress.sh HYSIM SCENARIO BENCH WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 bench=$3 work=$4
mkdir -p "$work"
args=(run "$scenario" -- "$bench" -g 8 -b 256M -e 512M -f 2 -n 10 -w 1) # about 1 s of wall time
# a line every 50 ms instead of every second: the run need not last seconds on a fast machine
export HYSIM_PROGRESS_INTERVAL_MS=50
"$hysim" "${args[@]}" >"$work/stdout" 2>"$work/stderr" || { echo "FAIL: run"; cat "$work/stderr"; exit 1; }
if grep -q "events/s" "$work/stderr"; then
  echo "FAIL: a progress line on a stderr that is not a terminal:"; cat "$work/stderr"; exit 1
fi
grep -q "^hysim: simulated" "$work/stderr" || { echo "FAIL: no summary"; exit 1; }
echo "ok: no progress line when stderr is a file"
if ! command -v script >/dev/null; then
  echo "script(1) is not installed: the terminal half is not checked"; exit 0
fi
cmd=$(printf '%q ' "$hysim" "${args[@]}")
script -qec "$cmd" /dev/null >"$work/tty" 2>&1 </dev/null || { echo "FAIL: run under script"; cat "$work/tty"; exit 1; }
if ! grep -aqE "hysim: simulated [0-9.]+ s, wall [0-9.]+ s, [0-9.e+]+ events/s" "$work/tty"; then
  echo "FAIL: no progress line on a terminal:"; cat -v "$work/tty" | tail -5; exit 1
fi
grep -ac "events/s" "$work/tty" | sed 's/^/progress lines: /'
echo "ok: progress line on a terminal"
