#!/usr/bin/env bash
# The 2 x 8 multiprocess all-reduce (one process per server) with the fabric
# in-process and with a speculating worker-process fabric (run.fabric:
# {process: worker, speculate: true}): the program's output and the report
# must be the same bytes, but for the report's fabric_speculation counts
# (they depend on wall-clock timing) and the summary's wall-time line.
# usage: check_speculative_e2e.sh HYSIM SCENARIO WORK_DIR PROGRAM [ARGS]
set -euo pipefail
hysim=$(realpath "$1") scenario=$(realpath "$2") work=$(realpath -m "$3") prog=$(realpath "$4")
shift 4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/inline" "$work/worker"
name=$(basename "$scenario")
cp "$scenario" "$work/inline/$name"
# the same scenario (same file name) with the run mapping extended by run.fabric
grep -q '^run: {.*}$' "$scenario" || fail "$scenario has no one-line run mapping to extend"
sed 's/^run: {\(.*\)}$/run: {\1, fabric: {process: worker, speculate: true}}/' "$scenario" > "$work/worker/$name"
grep -q 'fabric: {process: worker' "$work/worker/$name" || fail "could not add run.fabric"
for mode in inline worker; do
  # in its own folder: relative files the program writes (-i uid) never meet another test's
  (cd "$work/$mode" && "$hysim" run --report "$work/$mode/report.json" "$work/$mode/$name" -- "$prog" "$@") \
    > "$work/$mode/out" 2> "$work/$mode/err" || { cat "$work/$mode/err"; fail "the $mode run failed"; }
done
cat "$work/worker/err"
cmp "$work/inline/out" "$work/worker/out" ||
  { diff "$work/inline/out" "$work/worker/out" | head; fail "the program's output differs"; }
grep -q '"fabric_speculation": {"speculative_completions": 0, "withdrawn": 0, "rollbacks": 0' \
  "$work/inline/report.json" || fail "the in-process run's report shows speculation"
spec=$(grep '"fabric_speculation"' "$work/worker/report.json") || fail "the report lacks fabric_speculation"
echo "worker:$spec"
grep -v '"fabric_speculation"' "$work/inline/report.json" > "$work/inline.cmp"
grep -v '"fabric_speculation"' "$work/worker/report.json" > "$work/worker.cmp"
cmp "$work/inline.cmp" "$work/worker.cmp" ||
  { diff "$work/inline.cmp" "$work/worker.cmp" | head -20; fail "the reports differ"; }
grep -q '"exit_code": 0' "$work/worker/report.json" || fail "the worker run's report has no exit_code 0"
echo "ok: output and report identical ($(wc -c < "$work/inline/report.json") bytes)"
