#!/usr/bin/env bash
# hysim run --out: the summary, the report and the trace agree; hysim plot draws
# the three figures (when gnuplot is installed).
# usage: check_report.sh HYSIM SCENARIO BENCH WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 bench=$3 work=$4
here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work"
out=$("$hysim" run --out "$work/run" "$scenario" -- "$bench" -g 4 -b 1M -e 4M -f 4 -n 2 -w 1 2>&1)
status=$?
echo "$out"
[[ $status -eq 0 ]] || { echo "FAIL: hysim run exited with $status"; exit 1; }
for pattern in "GPU +busy +idle +comm +peak memory" "^hysim: +3 +[0-9.]+% +[0-9.]+% +[0-9.]+% +0\.[0-9]+ GiB" "busiest links"; do
  grep -qE "$pattern" <<<"$out" || { echo "FAIL: the summary lacks /$pattern/"; exit 1; }
done
report=$work/run/report.json
grep -q '"exit_code": 0' "$report" || { echo "FAIL: report's exit_code"; exit 1; }
# four GPUs were used: their busy time is within the run, the others did nothing
awk -F'"busy_s": ' '/"gpu": [0-9]/ { split($2, a, ","); n++; if (a[1] > 0) busy++ } END { exit !(n == 8 && busy == 4) }' "$report" ||
  { echo "FAIL: expected 8 GPUs in the report, 4 of them busy"; exit 1; }
"$here/check_trace.sh" "$work/run/trace.json" "$report" || exit 1

# --trace alone, and a bad path: a usage error before anything runs
"$hysim" run --trace "$work/t.json" "$scenario" -- "$bench" -g 2 -b 1M -e 1M -n 1 -w 0 >/dev/null 2>&1 &&
  grep -q '"traceEvents"' "$work/t.json" || { echo "FAIL: --trace alone"; exit 1; }
"$hysim" run --trace /nonexistent/t.json "$scenario" -- /bin/true >/dev/null 2>&1
[[ $? -eq 2 ]] || { echo "FAIL: an unwritable trace is not a usage error"; exit 1; }

if command -v gnuplot >/dev/null; then
  "$hysim" plot "$work/run" || { echo "FAIL: hysim plot"; exit 1; }
  for png in timeline links queues; do
    head -c 4 "$work/run/$png.png" | grep -q PNG || { echo "FAIL: $png.png is not a PNG"; exit 1; }
  done
  "$hysim" plot "$report" "$work/run/trace.json" "$work/figures" >/dev/null && [[ -s $work/figures/timeline.png ]] ||
    { echo "FAIL: hysim plot REPORT TRACE OUTDIR"; exit 1; }
else
  echo "gnuplot is not installed: hysim plot not checked"
fi
"$hysim" plot "$work/nothing-here" >/dev/null 2>&1
[[ $? -eq 2 ]] || { echo "FAIL: plot of a missing run is not a usage error"; exit 1; }
echo "ok"
