#!/usr/bin/env bash
# sync_edges.c under `hysim run`: threads, one GPU each, meeting outside
# CUDA with extra wakeups, timed waits, semaphores fed by a thread making no
# CUDA call, a fork, and threads cancelled in (or on their way into) waits,
# must each finish twice with byte-identical output, each thread's sync
# returning when its own kernels end (g + 1 kernels of K after the iteration
# began) and each leaving the meeting when the last sync returned (NT
# kernels after it began). Children forked while other threads meet in a
# barrier must meet in barriers of their own. A thread waiting on objects
# shared with another process must count as running, as without the wrapping.
# usage: check_sync_edges.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
K=1000000 NT=3 ITERS=4 # barrier_gpus.yaml's kernel (ns), sync_edges.c's threads and iterations
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=sync_edges
source "$(dirname "$0")/run_twice.sh"
for mode in mix timed sem fork cancel; do
  run_twice "$mode"
  n=$(grep -c '^iteration' "$work/$mode.out")
  ((n == NT * ITERS)) || fail "$mode: $n lines, not $((NT * ITERS))"
  # iteration k begins at k * NT * K; gpu g's sync ends (g + 1) * K later; all leave at (k + 1) * NT * K
  awk -v K=$K -v NT=$NT -v mode=$mode '/^iteration/ {
      k = $2; g = $4; sub(":", "", g); s = $8; m = $14; sub(/^\+/, "", s); sub(/^\+/, "", m)
      if (s != k * NT * K + (g + 1) * K) { printf "%s: iteration %d gpu %d sync returned at %s ns\n", mode, k, g, s; bad = 1 }
      if (m != (k + 1) * NT * K) { printf "%s: iteration %d gpu %d left the barrier at %s ns\n", mode, k, g, m; bad = 1 }
    } END { exit bad }' "$work/$mode.out" || fail "$mode: times other than the kernels'"
done
# forks: no GPU work; every child of the forks must have met its barrier
for run in forks forks.again; do
  if ! timeout 100 "$hysim" run "$scenario" -- "$prog" forks >"$work/$run.out" 2>"$work/$run.err"; then
    cat "$work/$run.err"; fail "the $run run failed"
  fi
  printf '%s\n' "forks: 300 children met at a barrier of their own" "sync_edges forks done" | diff - "$work/$run.out" ||
    fail "the $run run"
done
# pshared: waits on objects another process releases pass through: the main
# thread's syncs end with its own kernels, not with its helper thread's
for run in pshared pshared.again; do
  if ! timeout 60 "$hysim" run "$scenario" -- "$prog" pshared >"$work/$run.out" 2>"$work/$run.err"; then
    cat "$work/$run.err"; fail "the $run run failed"
  fi
  printf 'pshared %s: sync returned at +%d ns\n' semaphore $((NT * K)) condvar $((2 * NT * K)) barrier $((3 * NT * K)) |
    cat - <(echo "sync_edges pshared done") | diff - "$work/$run.out" || fail "the $run run"
done
echo ok
