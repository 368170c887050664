#!/usr/bin/env bash
# A communicator of more ranks than the scenario has GPUs is refused at
# ncclCommInitRank with a message naming both counts, and the program fails
# (exit status 1), instead of waiting for ranks that can never join until the
# run ends as a deadlock: multiprocess_allreduce -N 2 expects 2 servers' GPUs
# on a scenario with one server of 2.
# usage: check_comm_too_big.sh HYSIM SCENARIO MULTIPROCESS_ALLREDUCE WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
out=$(timeout 120 "$hysim" run "$scenario" -- "$prog" -N 2 -i uid -b 1M -e 1M -n 1 -w 0 2>&1)
status=$?
echo "$out"
[[ $status -eq 1 ]] || { echo "FAIL: expected exit status 1 (program failed), got $status"; exit 1; }
echo "$out" | grep -q "hysim: ncclCommInitRank: a communicator of 4 ranks, but the scenario has 2 GPUs" ||
  { echo "FAIL: no message naming the ranks and the GPUs"; exit 1; }
echo "$out" | grep -qi "deadlock" && { echo "FAIL: it still ended as a deadlock"; exit 1; }
echo ok
