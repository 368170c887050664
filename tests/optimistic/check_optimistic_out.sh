#!/usr/bin/env bash
# run.mode: optimistic with `--out` (report, trace and link sampling) on a
# multi-server all-reduce, against the same run in exact mode. The speculation
# forks simulate with the fabric's link sampler active, and must neither crash
# nor write to the run's files. Checks: both runs exit 0; the optimistic run
# answered ahead of the safe time at least once; nothing was revised (the
# processes issue the same all-reduces whatever the answers: no late flows
# change them); the program's output is identical in both modes; the trace is
# complete JSON.
# usage: check_optimistic_out.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

sed -e 's/mode: exact/mode: optimistic/' "$scenario" >"$work/optimistic.yaml"
grep -q "mode: optimistic" "$work/optimistic.yaml" || fail "the scenario has no run.mode: exact to turn into optimistic"
for mode in exact optimistic; do
  sc=$scenario; [[ $mode == optimistic ]] && sc=$work/optimistic.yaml
  timeout 120 "$hysim" run --out "$work/$mode" "$sc" -- "$prog" -N 2 -i "$work/id.$mode" -b 1M -e 64M -f 4 -n 3 -w 1 \
    >"$work/$mode.stdout" 2>"$work/$mode.stderr" || { cat "$work/$mode.stderr"; fail "the $mode run failed"; }
done
cat "$work/optimistic.stderr"
answers=$(grep -o '"optimistic_answers": [0-9]*' "$work/optimistic/report.json" | grep -o '[0-9]*$')
revised=$(grep -o '"answers_revised": [0-9]*' "$work/optimistic/report.json" | grep -o '[0-9]*$')
[[ -n $answers && $answers -gt 0 ]] || fail "no answer ahead of the safe time (optimistic_answers=$answers)"
[[ $revised == 0 ]] || fail "$revised answers revised in a run without late flows"
cmp "$work/exact.stdout" "$work/optimistic.stdout" || fail "the program printed other figures in optimistic mode"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/optimistic/trace.json" || fail "the trace is not JSON"
echo "ok: $answers answers ahead of the safe time, 0 revised, same output as exact"
