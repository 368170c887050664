#!/usr/bin/env bash
# `host_time: calls` under hysim run (host_time_calls_test.c): the scenario
# validates, the program's checks pass, and two runs read the same host clock
# at every point (byte-identical readings); the same scenario with the mode
# misspelt (`call`) is refused with a message that lists the modes.
# usage: host_time_calls_rerun.sh HYSIM SCENARIO PROGRAM
set -uo pipefail
hysim=$1 scenario=$2 program=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/hs-host-time.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$hysim" validate "$scenario" >"$dir/valid" 2>&1 || fail "validate $scenario: $(cat "$dir/valid")"
sed 's/host_time: calls/host_time: call/' "$scenario" >"$dir/typo.yaml"
grep -q 'host_time: call,' "$dir/typo.yaml" || fail "no host_time: calls in $scenario"
"$hysim" validate "$dir/typo.yaml" >"$dir/typo" 2>&1
status=$?
((status == 2)) || fail "validate with host_time: call exited $status, expected 2: $(cat "$dir/typo")"
grep -Eq 'run\.host_time: expected real, calls, zero, fixed:NS .*scaled:F .*got.*call' "$dir/typo" ||
  fail "validate with host_time: call said: $(cat "$dir/typo")"

for i in 1 2; do
  "$hysim" run "$scenario" -- "$program" calls >"$dir/out$i" 2>"$dir/err$i" ||
    fail "run $i exited $?: $(cat "$dir/err$i" "$dir/out$i")"
  grep '^host_time calls: ok readings' "$dir/out$i" >"$dir/readings$i" ||
    fail "run $i: $(cat "$dir/err$i" "$dir/out$i")"
done
cmp -s "$dir/readings1" "$dir/readings2" ||
  fail "two runs read different clocks:$(printf '\n'; cat "$dir/readings1" "$dir/readings2")"
echo "PASS: $(cut -c1-120 "$dir/readings1")..."
