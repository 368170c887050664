#!/usr/bin/env bash
# Wall time to simulate one 1 GiB all-reduce on 8 simulated H200 (NVSwitch),
# end to end: hysim run + the nvcc-built allreduce_bench, one timed iteration
# and no warm-up. Prints the benchmark's row and hysim's summary (simulated
# time, wall time, slowdown, packet-hops).
# usage: bench/e2e/allreduce_wall.sh [BUILD_DIR] [SIZE]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
size=${2:-1G}
start=$(date +%s.%N)
"$build/bin/hysim" run "$root/tests/e2e/ring.yaml" -- \
  "$build/bin/allreduce_bench" -g 8 -b "$size" -e "$size" -n 1 -w 0
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "wall time of the whole command: %.2f s\n", e - s }'
