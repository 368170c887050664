#!/usr/bin/env bash
# Wall time to simulate one 1 GiB all-reduce on 2 servers × 8 simulated H200
# (16 ranks, one process per server, 8 × 400G RoCE NICs per server on
# rail switches), end to end: hysim run + the nvcc-built
# multiprocess_allreduce, one timed iteration and no warm-up, on
# tests/e2e/two_servers.yaml (host_time zero: the simulated figures do not
# depend on the machine). Prints the benchmark's row, hysim's summary
# (simulated time, wall time, slowdown, packet-hops) and the command's wall
# wall time, CPU time (hysim and the program; what a busy machine does not
# inflate) and peak resident size.
# usage: bench/e2e/allreduce_2srv_wall.sh [BUILD_DIR] [SIZE]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
size=${2:-1G}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/time -f "whole command: wall %e s, CPU %U s user + %S s system, peak resident %M KB" \
  "$build/bin/hysim" run "$root/tests/e2e/two_servers.yaml" -- \
  "$build/bin/multiprocess_allreduce" -N 2 -i "$work/id" -b "$size" -e "$size" -n 1 -w 0 2>&1 |
  grep -v '^hysim:   '
