#!/usr/bin/env bash
# One process, 2 GPUs: GPU 0's rank runs an all-reduce that GPU 1's rank
# never joins, and waits for it. hysim must find the deadlock at once (every
# process waits, no GPU work is left), exit with status 3, name the missing
# rank; where the program prints hysimd's message before hysim stops it, it
# prints it as it is, not with its "hysim: " prefix doubled.
# usage: check_deadlock.sh HYSIM SCENARIO PROGRAM WORKDIR
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
source "$(dirname "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"
timeout 50 "$hysim" run "$scenario" -- "$prog" deadlock 2>"$work/stderr"
status=$?
cat "$work/stderr"
[[ $status -eq 3 ]] || fail "expected exit status 3 (simulation error), got $status"
grep -q "deadlock: every process waits and no GPU work is left" "$work/stderr" || fail "no deadlock message"
grep -Eq "ranks joined \[?0\]?, missing \[?1\]?" "$work/stderr" || fail "the message does not name the missing rank"
grep -q "hysim: hysim:" "$work/stderr" && fail "a message with its prefix doubled"
grep -q "GPU 0's all-reduce completed" "$work/stderr" && fail "the wait returned as if it had completed"
echo ok
