#!/usr/bin/env bash
# ncclCommSplit across processes: comm_split_mp.c (2 processes × 2 GPUs)
# checks its new communicators itself; then, with one process that never
# calls the split, the stall watchdog (run.stall_timeout_s = 1 here) must stop
# the run and name the split and its missing ranks.
# usage: check_comm_split_mp.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
out=$("$hysim" run "$scenario" -- "$prog" "$work/id")
echo "$out"
for p in 0 1; do
  echo "$out" | grep -q "^split mp ok (process $p)" || { echo "process $p did not finish its splits"; exit 1; }
done

sed 's/stall_timeout_s: [0-9.]*/stall_timeout_s: 1/' "$scenario" >"$work/stall.yaml"
if "$hysim" run "$work/stall.yaml" -- "$prog" "$work/id2" skip >"$work/stdout" 2>"$work/stderr"; then
  echo "a split with a rank that never calls it did not fail"; exit 1
fi
cat "$work/stderr"
grep -q "stalled: no simulated progress" "$work/stderr" || { echo "no stall report"; exit 1; }
grep -q "waits in ncclCommSplit" "$work/stderr" || { echo "the waiting process is not named"; exit 1; }
grep -Eq "ncclCommSplit #0 of comm 0x[0-9a-f]+: ranks called \[0, 1\], missing \[2, 3\]" "$work/stderr" ||
  { echo "the split's missing ranks are not named"; exit 1; }
echo ok
