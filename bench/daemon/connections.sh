#!/usr/bin/env bash
# hysimd under many connections: the wall time of a run and hysim's peak memory (its summary line) for a
# normal run of examples/allreduce_bench, and the same run beside 1,000 idle connections (held open, never
# registering, renewed every second: past 256 the oldest are closed) and beside 1,000 churning ones
# (connect, one frame that is not a Register, closed), from tests/reliability/stranger.py.
# usage: bench/daemon/connections.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
hysim=$build/bin/hysim bench_prog=$build/bin/allreduce_bench
scenario=$root/scenarios/h200x8-deterministic.yaml stranger=$root/tests/reliability/stranger.py
args="-b 1M -e 64M"
quiet="env -u LD_PRELOAD"
measure() {
  local name=$1 program=$2 start end out
  out=$(mktemp)
  start=$(date +%s.%N)
  "$hysim" run "$scenario" -- sh -c "$program" >"$out" 2>&1
  end=$(date +%s.%N)
  printf "%-28s wall %6.2f s   hysim peak memory %4s MiB   %s\n" "$name" "$(echo "$end - $start" | bc)" \
    "$(sed -n 's/.*peak memory \([0-9]*\) MiB.*/\1/p' "$out")" \
    "$(grep -o '[0-9]* that did not register first\|[0-9]* closed to make room' "$out" | tr '\n' ' ')"
  rm -f "$out"
}
echo "# $(date -u +%F) $(nproc) cores; allreduce_bench $args on $(basename "$scenario"); ulimit -n $(ulimit -n)"
for i in 1 2 3; do
  measure "normal run ($i)" "exec $bench_prog $args"
  measure "1,000 idle connections ($i)" "$quiet python3 $stranger \$HYSIM_ENDPOINT silent 1000 60 & $quiet sleep 1; exec $bench_prog $args"
  measure "1,000 churning ($i)" "python3 $stranger churn 1000 && exec $bench_prog $args"
done
