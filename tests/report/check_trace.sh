#!/usr/bin/env bash
# Checks a trace written by `hysim run --trace` against the run's report
# (tools/REPORT.md): JSON framing, every track named, events nested per track
# (no partial overlap), NCCL and memcpy events carrying their sizes, counters
# within range, and times consistent with the report: the last GPU event ends
# at the report's last_gpu_activity_ps and nothing ends after simulated_ps.
# usage: check_trace.sh TRACE.json REPORT.json
set -euo pipefail
trace=$1 report=$2
num() { # num KEY: the first numeric value of "KEY" in the report
  grep -o "\"$1\": [0-9.e+-]*" "$report" | head -1 | awk '{print $2}'
}
grep -q '"schema": "hysim-report/2"' "$report" || { echo "FAIL: $report: no schema hysim-report/2"; exit 1; }
last_gpu=$(num last_gpu_activity_ps) sim_end=$(num simulated_ps) ngpus=$(grep -c '"gpu": [0-9]' "$report")
[[ -n $last_gpu && -n $sim_end && $ngpus -gt 0 ]] || { echo "FAIL: report lacks times or GPUs"; exit 1; }

awk -v last_gpu="$last_gpu" -v sim_end="$sim_end" -v ngpus="$ngpus" '
function field(key,   m) { # the value of "key": a number or a string
  if (match($0, "\"" key "\":(\"[^\"]*\"|[-0-9.e+]+)")) {
    m = substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3); gsub(/"/, "", m); return m
  }
  return ""
}
function fail(msg) { print "FAIL: line " NR ": " msg; bad = 1 }
NR == 1 { if ($0 !~ /"schema":"hysim-trace\/1"/ || $0 !~ /"traceEvents":\[$/) fail("no trace header"); next }
/^\]\}$/ { closed = 1; next }
{
  if (closed) fail("text after the end")
  line = $0; sub(/,$/, "", line)
  if (line !~ /^\{.*\}$/) { fail("not one event per line: " $0); next }
  ph = field("ph"); pid = field("pid"); tid = field("tid")
  if (ph == "M") {
    if (field("name") == "process_name") pname[pid] = 1
    if (field("name") == "thread_name") tname[pid SUBSEP tid] = 1
    next
  }
  if (ph == "C") {
    if (!pname[pid]) fail("counter on an unnamed process " pid)
    v = $0; sub(/.*"args":\{"[a-z_]+":/, "", v); sub(/\}\}.*/, "", v); v += 0
    name = field("name")
    # a packet counts when it starts: an interval may read one packet above 100 %
    if (v < 0 || (name ~ /^(util|pfc) / && v > 102)) fail("counter " name " out of range: " v)
    counters++
    next
  }
  if (ph != "X") { fail("unexpected phase " ph); next }
  if (!pname[pid] || !tname[pid SUBSEP tid]) fail("event on an unnamed track " pid "/" tid)
  # picoseconds as doubles (exact below 2^53 ps); int() would clamp at 2^31 in mawk
  cat = field("cat"); start = sprintf("%.0f", field("ts") * 1e6) + 0; end = start + sprintf("%.0f", field("dur") * 1e6)
  if (field("name") == "") fail("event without a name")
  if ((cat == "nccl" || cat == "memcpy") && !($0 ~ /"bytes":[0-9]+/)) fail(cat " event without bytes")
  if (cat == "nccl" && !($0 ~ /"kind":"[A-Za-z]+"/)) fail("NCCL event without its kind")
  if (end > sim_end) fail("event ends at " end " ps, after the simulated end " sim_end)
  if (pid >= 1 && pid <= ngpus) { gpu_events++; if (end > gpu_end) gpu_end = end }
  else host_events++
  printf "%s %s %.0f %.0f\n", pid, tid, start, end > "/dev/stderr"
  events++
}
END {
  if (!closed) fail("the trace is not closed")
  if (gpu_end != last_gpu) fail("last GPU event ends at " gpu_end " ps, the report says " last_gpu)
  if (!gpu_events || !host_events || !counters) fail("missing kinds: " gpu_events " GPU, " host_events " host events, " counters " counters")
  printf "%d events (%d on GPUs, %d host), %d counter values; last GPU event ends at %.0f ps\n", events, gpu_events, host_events, counters, gpu_end
  exit bad
}' "$trace" 2> "$trace.spans"

# nesting: per track in time order, each event lies after or inside the enclosing ones
sort -k1,1n -k2,2n -k3,3n -k4,4nr "$trace.spans" | awk '
$1 != p || $2 != t { p = $1; t = $2; depth = 0 }
{
  while (depth > 0 && $3 >= stack[depth]) depth--
  if (depth > 0 && $4 > stack[depth]) { print "FAIL: track " $1 "/" $2 ": event [" $3 ", " $4 "] overlaps one ending at " stack[depth]; bad = 1 }
  stack[++depth] = $4
}
END { exit bad }'
rm -f "$trace.spans"
echo "ok: $trace"
