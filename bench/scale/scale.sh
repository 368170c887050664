#!/usr/bin/env bash
# How many simulated GPUs one hysim run can drive in a collective benchmark.
# For each size it writes a scenario, runs one 1 MiB all-reduce (one timed
# iteration, no warm-up) under `hysim run`, and prints one CSV row: exit
# status, wall seconds, peak resident memory (all processes: the largest one;
# hysim itself, in which hysimd runs; the largest program process, sampled
# every 0.2 s, so empty for very short runs), and the simulated time. It stops at
# the first failure or at the first size slower than the wall-time cap.
#
# Two ways to spread the GPUs:
#   process  one process drives every GPU (allreduce_bench -g G,
#            ncclCommInitAll) on one server of G GPUs on one NVSwitch plane
#   servers  G/8 servers of 8 x H200 on a rail-optimised 400G RoCE fabric,
#            one process per server (multiprocess_allreduce), as `hysim run`
#            launches a multi-server scenario
#
# usage: bench/scale/scale.sh [-B BUILD_DIR] [-m process|servers] [-c CAP_S] [SIZES...]
#   default: build, servers, 120 s, 8 16 32 64 ... (doubling until it stops)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build mode=servers cap=120
while getopts "B:m:c:" opt; do
  case $opt in
    B) build=$OPTARG ;;
    m) mode=$OPTARG ;;
    c) cap=$OPTARG ;;
    *) echo "usage: $0 [-B BUILD_DIR] [-m process|servers] [-c CAP_S] [SIZES...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
case $mode in process | servers) ;; *) echo "$0: -m process or servers, not $mode" >&2; exit 2 ;; esac
sizes=("$@")
if [ ${#sizes[@]} -eq 0 ]; then
  sizes=(); g=8; while [ $g -le 1048576 ]; do sizes+=("$g"); g=$((g * 2)); done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# scenario YAML for G GPUs on stdout
scenario() {
  local g=$1
  if [ "$mode" = process ]; then
    printf 'name: scale, one process, %d x H200\ngpu: {model: H200}\n' "$g"
    printf 'servers: {count: 1, gpus_per_server: %d}\n' "$g"
  else
    printf 'name: scale, %d servers of 8 x H200, rails\ngpu: {model: H200}\n' $((g / 8))
    printf 'servers: {count: %d, gpus_per_server: 8}\n' $((g / 8))
    printf 'nics: {per_server: 8, gbps: 400, rail_aligned: true}\n'
    printf 'fabric: {topology: rail_optimized, leaves: 8, spines: 0}\n'
  fi
  printf 'run: {mode: exact, host_time: zero, seed: 1, stall_timeout_s: %s}\n' "$cap"
}

# Peak resident KB (VmHWM) of hysim (PID) and of its children, the program's
# processes, sampled every 0.2 s until hysim exits: "HYSIM_KB PROGRAM_KB" in OUT
# (the program's figure is the largest of its processes).
watch_hwm() {
  local pid=$1 out=$2 h=0 p=0 v c
  while kill -0 "$pid" 2>/dev/null; do
    v=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
    [ -n "$v" ] && [ "$v" -gt "$h" ] && h=$v
    for c in $(pgrep -P "$pid"); do
      v=$(awk '/^VmHWM/ { print $2 }' "/proc/$c/status" 2>/dev/null)
      [ -n "$v" ] && [ "$v" -gt "$p" ] && p=$v
    done
    echo "$h $p" >"$out"
    sleep 0.2
  done
}

echo "mode,gpus,exit,wall_s,peak_rss_mib,hysim_peak_rss_mib,program_peak_rss_mib,simulated_us,note"
for g in "${sizes[@]}"; do
  if [ "$mode" = servers ] && [ $((g % 8)) -ne 0 ]; then
    echo "$0: servers mode needs multiples of 8 GPUs, not $g" >&2; exit 2
  fi
  scenario "$g" >"$work/s.yaml"
  rm -f "$work/id" "$work/hwm" "$work/all"
  if [ "$mode" = process ]; then
    prog=("$build/bin/allreduce_bench" -g "$g")
  else
    prog=("$build/bin/multiprocess_allreduce" -N $((g / 8)) -i "$work/id")
  fi
  start=$(date +%s.%N)
  /usr/bin/time -f %M -o "$work/all" timeout -s TERM -k 10 "$cap" "$build/bin/hysim" run "$work/s.yaml" -- \
    "${prog[@]}" -b 1M -e 1M -n 1 -w 0 >"$work/log" 2>&1 &
  pid=$!
  # hysim: the child of timeout, /usr/bin/time's only child
  sleep 0.05
  tpid=$(pgrep -P "$pid" | head -1)
  hpid=""; [ -n "$tpid" ] && hpid=$(pgrep -P "$tpid" | head -1)
  [ -n "$hpid" ] && watch_hwm "$hpid" "$work/hwm" &
  wpid=$!
  wait "$pid"; rc=$?
  wait "$wpid" 2>/dev/null
  end=$(date +%s.%N)
  wall=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
  arss=$(awk '$1 ~ /^[0-9]+$/ { printf "%.1f", $1 / 1024 }' "$work/all" 2>/dev/null)
  hrss=$(awk '$1 > 0 { printf "%.1f", $1 / 1024 }' "$work/hwm" 2>/dev/null)
  prss=$(awk '$2 > 0 { printf "%.1f", $2 / 1024 }' "$work/hwm" 2>/dev/null)
  sim=$(awk '/^hysim: simulated/ { printf "%.1f", $3 * 1e6 }' "$work/log")
  note=""
  # timeout: 124 after TERM, 137 when hysim needed a KILL 10 s later
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && note="over the ${cap} s wall-time cap"
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] &&
    note=$(grep -v '^hysim:   \|^#\|^ *[0-9]' "$work/log" | head -2 | tr '\n,' '; ' | sed "s|$work/||g")
  echo "$mode,$g,$rc,$wall,${arss:-},${hrss:-},${prss:-},${sim:-},$note"
  [ "$rc" -ne 0 ] && break
done
exit 0
