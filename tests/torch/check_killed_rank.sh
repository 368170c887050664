#!/usr/bin/env bash
# A killed rank ends the run: hysim run exits with an error that names the
# process whose connection ended without Bye, well before the stall watchdog.
# usage: check_killed_rank.sh HYSIM SCENARIO VENV SCRIPT
set -uo pipefail
hysim=$1 scenario=$2 venv=$3 script=$4
[[ -x $venv/bin/torchrun ]] || { echo "FAIL: no PyTorch environment at $venv: run tools/install-deps.sh"; exit 1; }
start=$(date +%s)
out=$("$hysim" run "$scenario" -- "$venv/bin/torchrun" --standalone --nproc_per_node=2 "$script" 2>&1)
rc=$?
took=$(($(date +%s) - start))
grep -v '^W[0-9]\{4\} ' <<<"$out" | tail -25
fail=0
((rc != 0)) || { echo "FAIL: hysim run exited 0"; fail=1; }
grep -q "rank 1: first all-reduce done" <<<"$out" || { echo "FAIL: the job did not get going"; fail=1; }
grep -q "second all-reduce done" <<<"$out" && { echo "FAIL: an all-reduce finished without rank 1"; fail=1; }
grep -qE "hysim: .*process [0-9]+ \(server 0, rank 1 of 2, .*(closed its connection without Bye|killed|signal)" <<<"$out" ||
  { echo "FAIL: no message names the dead process"; fail=1; }
((took < 55)) || { echo "FAIL: took ${took} s (the stall watchdog's 60 s?)"; fail=1; }
((fail)) && exit 1
echo "ok (${took} s)"
