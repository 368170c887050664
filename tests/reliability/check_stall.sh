#!/usr/bin/env bash
# Rank 1 never joins rank 0's all-reduce but stays alive: after
# run.stall_timeout_s (1 s in the scenario) hysim must stop the run and say
# which communicator, which operation, which ranks joined and which are missing.
# usage: check_stall.sh HYSIM SCENARIO PROGRAM WORKDIR
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
source "$(dirname "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"

start=$(now)
timeout 50 "$hysim" run "$scenario" -- "$prog" stall 2>"$work/stderr"
status=$?
took=$(elapsed "$start")
cat "$work/stderr"
echo "hysim exited with status $status after $took s"
[[ $status -eq 3 ]] || fail "expected exit status 3 (simulation error), got $status"
awk -v t="$took" 'BEGIN { exit !(t < 20) }' || fail "the stall was noticed only after $took s"
grep -q "stalled: no simulated progress for [0-9.]* s of wall time (run.stall_timeout_s = 1)" "$work/stderr" ||
  fail "no stall message"
grep -Eq "AllReduce on comm 0x[0-9a-f]+, seq 0: ranks joined \[?0\]?, missing \[?1\]?" "$work/stderr" ||
  fail "the message does not name the all-reduce, the rank that joined and the one missing"
grep -q "waits for" "$work/stderr" || fail "the message does not say what rank 0 waits for"
# the programs print hysimd's message as it is, which begins "hysim: " already
grep -q "hysim: hysim:" "$work/stderr" && fail "a message with its prefix doubled"

# The key is validated: a negative timeout is an error naming it.
printf 'servers: {count: 1, gpus_per_server: 1}\nrun: {stall_timeout_s: -1}\n' >"$work/bad.yaml"
out=$("$hysim" validate "$work/bad.yaml" 2>&1)
[[ $? -ne 0 ]] || fail "validate accepted stall_timeout_s: -1"
grep -q "run.stall_timeout_s: expected" <<<"$out" || fail "no message for stall_timeout_s: -1: $out"
echo ok
