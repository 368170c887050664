#!/usr/bin/env bash
# barrier_gpus.c under `hysim run`: threads, one GPU each, that synchronise
# their streams and then meet in a pthread barrier, a mutex + condition
# variable barrier, a semaphore barrier or a futex barrier must finish, each thread's sync
# must return when its own kernels end (g + 1 kernels of K after the
# iteration began) and each must leave the barrier when the last sync
# returned (NT kernels after it began), with byte-identical output twice.
# So must threads that wait for items a thread making no CUDA call hands
# out. Threads that never make a CUDA call and meet in barriers while the
# main thread works must not change the main thread's times.
# usage: check_barrier_gpus.sh HYSIM SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 work=$4
K=1000000 NT=3 ITERS=4 # barrier_gpus.yaml's kernel (ns), barrier_gpus.c's threads and iterations
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
name=barrier_gpus
source "$(dirname "$0")/run_twice.sh"
for mode in barrier condvar sem loader quiet futex; do
  run_twice "$mode"
done
cat "$work/barrier.out"
for mode in barrier condvar sem loader futex; do
  n=$(grep -c '^iteration' "$work/$mode.out")
  ((n == NT * ITERS)) || fail "$mode: $n lines, not $((NT * ITERS))"
  # iteration k begins at k * NT * K; gpu g's sync ends (g + 1) * K later; all leave at (k + 1) * NT * K
  awk -v K=$K -v NT=$NT -v mode=$mode '/^iteration/ {
      k = $2; g = $4; sub(":", "", g); s = $8; m = $14; sub(/^\+/, "", s); sub(/^\+/, "", m)
      if (s != k * NT * K + (g + 1) * K) { printf "%s: iteration %d gpu %d sync returned at %s ns\n", mode, k, g, s; bad = 1 }
      if (m != (k + 1) * NT * K) { printf "%s: iteration %d gpu %d left the barrier at %s ns\n", mode, k, g, m; bad = 1 }
    } END { exit bad }' "$work/$mode.out" || fail "$mode: times other than the kernels'"
done
diff <(grep -v done "$work/barrier.out") <(grep -v done "$work/condvar.out") || fail "condvar and barrier differ"
for mode in sem loader futex; do
  diff <(grep -v done "$work/barrier.out") <(grep -v done "$work/$mode.out") || fail "$mode and barrier differ"
done
n=$(awk -v K=$K -v NT=$NT '/^quiet iteration/ { k = $3; sub(":", "", k); t = $9; sub(/^\+/, "", t); if (t == (k + 1) * NT * K) n++ } END { print n + 0 }' "$work/quiet.out")
((n == ITERS)) || { cat "$work/quiet.out"; fail "quiet: the main thread's syncs did not return every NT kernels"; }
echo ok
