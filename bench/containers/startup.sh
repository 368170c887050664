#!/usr/bin/env bash
# Container start-up cost of `hysim run --containers`: wall time of a run of
# /bin/true on N servers (one container each: start, run, stop, remove) next
# to the same run as plain processes. Median of REPS runs per N.
# usage: bench/containers/startup.sh HYSIM [REPS] [N...]   (default 5 runs, N = 2 8)
set -euo pipefail
hysim=$1 reps=${2:-5}
shift $(( $# > 1 ? 2 : 1 ))
counts=("${@:-2 8}")
# shellcheck disable=SC2206
counts=(${counts[*]})
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'; }

printf '%8s %14s %14s %14s\n' servers processes_s containers_s per_container_s
for n in "${counts[@]}"; do
  cat > "$work/s$n.yaml" <<YAML
name: startup $n servers
gpu: {model: H200}
servers: {count: $n, gpus_per_server: 8}
nics: {per_server: 8, gbps: 400, rail_aligned: true}
fabric: {topology: rail_optimized, leaves: 8, spines: 0}
run: {host_time: zero}
YAML
  p=$(for _ in $(seq "$reps"); do seconds "$hysim" run "$work/s$n.yaml" -- /bin/true; done | median)
  c=$(for _ in $(seq "$reps"); do seconds "$hysim" run --containers "$work/s$n.yaml" -- /bin/true; done | median)
  printf '%8d %14s %14s %14.3f\n' "$n" "$p" "$c" "$(awk -v c="$c" -v p="$p" -v n="$n" 'BEGIN { print (c - p) / n }')"
done
