#!/usr/bin/env bash
# hysim run --out twice on the same scenario, program and seed, with a host
# clock that does not read the CPU: the reports and the traces must be the
# same bytes, although the second run reads the scenario and the program by
# other paths (relative, through a link of the same name) from another
# folder and its processes get other pids. The wall time goes to host.json.
# usage: check_same_report.sh HYSIM SCENARIO WORK_DIR PROGRAM [ARGS]
set -euo pipefail
hysim=$(realpath "$1") scenario=$(realpath "$2") work=$(realpath -m "$3") prog=$(realpath "$4")
shift 4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/elsewhere"
# each run in a folder of its own: relative files the program writes (-i uid) never meet another test's
(cd "$work" && "$hysim" run --out "$work/first" "$scenario" -- "$prog" "$@") > "$work/first.out" 2> "$work/first.err" ||
  { cat "$work/first.err"; fail "the first run failed"; }
name=$(basename "$prog")
cp "$scenario" "$work/elsewhere/" && ln -s "$prog" "$work/elsewhere/$name"
(cd "$work/elsewhere" && "$hysim" run --out ../second "$(basename "$scenario")" -- "./$name" "$@") \
  > "$work/second.out" 2> "$work/second.err" || { cat "$work/second.err"; fail "the second run failed"; }
cat "$work/first.err"
cmp "$work/first.out" "$work/second.out" || fail "the program's output differs"
grep -q '"exit_code": 0' "$work/first/report.json" || fail "the first run's report has no exit_code 0"
grep -q '"wall_s"' "$work/first/report.json" && fail "the report holds the wall time"
grep -qE '"wall_s": [0-9.]+' "$work/first/host.json" || fail "host.json lacks wall_s"
grep -q '"name":"host: server' "$work/first/trace.json" || fail "the trace has no host track"
cmp "$work/first/report.json" "$work/second/report.json" ||
  { diff "$work/first/report.json" "$work/second/report.json" | head -20; fail "the reports differ"; }
cmp "$work/first/trace.json" "$work/second/trace.json" ||
  { diff "$work/first/trace.json" "$work/second/trace.json" | head -20; fail "the traces differ"; }
echo "reports and traces identical ($(wc -c < "$work/first/report.json") and $(wc -c < "$work/first/trace.json") bytes)"
