#!/usr/bin/env bash
# `hysim run --out` and `--stats` with the fabric in a worker process: the
# same scenario and program in-process (inline), in a worker (worker:
# speculate: false) and in a speculating worker (speculate) must write the
# same bytes: program output, report.json (but for its fabric_speculation
# counts, which depend on wall-clock timing), trace.json (link counters from
# the fabric's sampler with --out alone, from flow starts and completions
# with --stats) and every --stats file, link_timeseries.csv included.
# usage: check_worker_outputs.sh HYSIM SCENARIO STATS_US MODES WORK_DIR PROGRAM [ARGS]
#   STATS_US: stats.interval_us to add to the scenario, or - (it has its own)
#   MODES: a comma-separated subset of inline,worker,speculate; inline first
set -euo pipefail
hysim=$(realpath "$1") scenario=$(realpath "$2") stats_us=$3 modes=${4//,/ } work=$(realpath -m "$5")
prog=$(realpath "$6")
shift 6
fail() { echo "FAIL: $*"; exit 1; }
[[ $modes == inline\ * ]] || fail "MODES must start with inline"
rm -rf "$work" && mkdir -p "$work"
name=$(basename "$scenario")

# The scenario with run.fabric set to $1 (a flow mapping), whether run is a
# one-line mapping or a block of two-space-indented keys.
with_fabric() {
  if grep -q '^run: {.*}$' "$scenario"; then
    sed "s/^run: {\(.*\)}\$/run: {\1, fabric: $1}/" "$scenario"
  else
    grep -q '^run:$' "$scenario" || fail "$scenario has no run mapping to extend"
    sed "s/^run:\$/run:\n  fabric: $1/" "$scenario"
  fi
}

for mode in $modes; do
  mkdir -p "$work/$mode"
  case $mode in
    inline) cp "$scenario" "$work/$mode/$name" ;;
    worker) with_fabric '{process: worker, speculate: false}' > "$work/$mode/$name" ;;
    speculate) with_fabric '{process: worker, speculate: true}' > "$work/$mode/$name" ;;
    *) fail "unknown mode $mode" ;;
  esac
  [[ $mode == inline ]] || grep -q 'fabric: {process: worker' "$work/$mode/$name" || fail "could not add run.fabric"
  if [[ $stats_us != - ]]; then
    grep -q '^stats:' "$scenario" && fail "$scenario has a stats mapping already: pass -"
    echo "stats: {interval_us: $stats_us}" >> "$work/$mode/$name"
  fi
  # --out alone: the trace's link counters come from the fabric's sampler;
  # with --stats that sampler writes link_timeseries.csv instead. Run in the
  # mode's folder: files the program names by a relative path stay there.
  for run in out stats; do
    extra=()
    [[ $run == stats ]] && extra=(--stats "$work/$mode/$run/stats")
    (cd "$work/$mode" && "$hysim" run --out "$work/$mode/$run" "${extra[@]}" "$work/$mode/$name" -- "$prog" "$@") \
      > "$work/$mode/$run.stdout" 2> "$work/$mode/$run.stderr" ||
      { cat "$work/$mode/$run.stderr"; fail "the $mode run with --$run failed"; }
    grep -v '"fabric_speculation"' "$work/$mode/$run/report.json" > "$work/$mode/$run/report.cmp"
  done
  grep -q '"exit_code": 0' "$work/$mode/out/report.json" || fail "the $mode run's report has no exit_code 0"
  echo "$mode: $(grep -o '"fabric_speculation": {[^}]*}' "$work/$mode/out/report.json")"
done

ref=$work/inline
# What the comparison relies on: the outputs hold link samples at all.
grep -q '"ph":"C".*"name":"queue .*"kib"' "$ref/out/trace.json" || fail "no sampled queue counters in the trace"
(( $(wc -l < "$ref/stats/stats/link_timeseries.csv") > 1 )) || fail "link_timeseries.csv has no rows"
for mode in $modes; do
  [[ $mode == inline ]] && continue
  for f in out.stdout out/report.cmp out/trace.json stats.stdout stats/report.cmp stats/trace.json \
           stats/stats/links.csv stats/stats/flows.csv stats/stats/link_timeseries.csv stats/stats/summary.json; do
    cmp "$ref/$f" "$work/$mode/$f" ||
      { diff "$ref/$f" "$work/$mode/$f" | head -10; fail "$mode: $f differs from the in-process run's"; }
  done
done
echo "ok: $modes identical ($(wc -l < "$ref/stats/stats/link_timeseries.csv") link_timeseries.csv lines," \
     "$(grep -c '"ph":"C"' "$ref/out/trace.json") sampled trace counters)"
