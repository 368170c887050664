#!/usr/bin/env bash
# plain_sync.c without hysim: run plain, with LD_PRELOAD=libhysim.so and
# linked against it (HYSIM_ENDPOINT unset), its threads must meet as libc
# alone has them meet: the expected counts, the same output each way.
# usage: check_plain_sync.sh PRELOAD PROGRAM PROGRAM_LINKED WORK_DIR
# PRELOAD: libhysim.so, after the ASan runtime in sanitizer builds
set -euo pipefail
preload=$1 prog=$2 linked=$3 work=$4
lib=${preload##* }
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
# (outputs read whole first: grep -q ending a pipe early would fail it under pipefail)
exports=$(nm -D --defined-only "$lib")
for sym in pthread_cond_wait pthread_cond_signal pthread_cond_broadcast pthread_barrier_init \
           pthread_barrier_wait pthread_barrier_destroy sem_wait sem_post; do
  grep -qw "$sym" <<<"$exports" || fail "libhysim.so does not export $sym: nothing to pass through"
done
deps=$(ldd "$linked")
grep -q libhysim <<<"$deps" || fail "$linked is not linked against libhysim.so"
run() { timeout 60 env -u HYSIM_ENDPOINT "$@"; }
run "$prog" >"$work/plain.out" || fail "the plain run failed"
run env LD_PRELOAD="$preload" "$prog" >"$work/preloaded.out" || fail "the preloaded run failed"
run "$linked" >"$work/linked.out" || fail "the linked run failed"
cat "$work/plain.out"
printf '%s\n' "condition-variable barrier: 2000 generations" "pthread barrier: 2000 serial threads" \
  "semaphore ring: sum 12000" "ping-pong: turns 0 0" "semaphore: 2000 items consumed, 3 left" \
  "timed waits: two timed out, one signalled" "plain_sync done" >"$work/expected"
diff "$work/expected" "$work/plain.out" || fail "the plain run's counts"
diff "$work/plain.out" "$work/preloaded.out" || fail "libhysim.so preloaded changed the program"
diff "$work/plain.out" "$work/linked.out" || fail "libhysim.so linked changed the program"
echo ok
