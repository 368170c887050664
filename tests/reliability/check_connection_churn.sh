#!/usr/bin/env bash
# A run that sees more connections over its life than it may have open files
# (1,200 under `ulimit -n 256`): hysimd refuses each stranger and closes it,
# keeps only open connections in its poll set, and the program's own run
# beside them prints what a clean run prints. Before, the poll set kept
# every connection ever accepted: past the limit poll() failed at once and
# the loop spun for good.
# usage: check_connection_churn.sh HYSIM SCENARIO BENCH WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 bench=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work"
churn=$(dirname "$0")/connection_churn.py
command -v python3 >/dev/null || fail "python3 is not installed"
clean() { grep -v "wall time\|refused" "$1" | grep -v "^hysim: [0-9]* process"; }
timeout 120 "$hysim" run "$scenario" -- "$bench" -b 1M -e 4M >"$work/clean.out" 2>&1 || { cat "$work/clean.out"; fail "the clean run failed"; }
(
  ulimit -n 256
  timeout 120 "$hysim" run "$scenario" -- sh -c "python3 $churn && exec $bench -b 1M -e 4M" >"$work/churn.out" 2>&1
) || { tail -20 "$work/churn.out"; fail "the run beside 1,200 connections failed (or hung)"; }
grep -q "^churn: 1200 connections refused and closed" "$work/churn.out" || fail "the connections were not all refused"
grep -q "1200 that did not register first" "$work/churn.out" || fail "the summary does not count the refusals"
diff <(clean "$work/clean.out" | grep -v "^churn:") <(clean "$work/churn.out" | grep -v "^churn:") ||
  fail "the program's run differs from the clean run"
echo "connection churn: ok"
