#!/usr/bin/env bash
# Runs the 2-server example once as plain processes and once in two
# containers (hysim run --containers, Unix socket and TCP endpoints) on a
# scenario whose host clock is zero: the program's output must be
# byte-identical. Also checks each container's hostname and server id, and
# that nothing is left behind.
# usage: check_same_as_processes.sh HYSIM CONTAINERS_DIR PODMAN_DIR SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 CONTAINERS_DIR=$2 PODMAN_DIR=$3 scenario=$4 prog=$5 work=$6
. "$(dirname "$0")/lib.sh"
require_podman
rm -rf "$work" && mkdir -p "$work" && cd "$work"
before=$(podman_state)
args=(-N 2 -i uid -b 1M -e 16M -f 4 -n 2 -w 1)

"$hysim" run "$scenario" -- "$prog" "${args[@]}" > processes.out 2> processes.err ||
  { cat processes.err; fail "process mode failed"; }
"$hysim" run --containers "$scenario" -- "$prog" "${args[@]}" > containers.out 2> containers.err ||
  { cat containers.err; fail "container mode failed"; }
"$hysim" run --containers --endpoint tcp "$scenario" -- "$prog" "${args[@]}" > tcp.out 2> tcp.err ||
  { cat tcp.err; fail "container mode over TCP failed"; }
cat containers.out
[[ $(grep -c '^ *[0-9]' processes.out) == 3 ]] || fail "expected 3 rows from process mode"
cmp processes.out containers.out || fail "containers (Unix socket) and processes differ"
cmp processes.out tcp.out || fail "containers (TCP) and processes differ"
grep -q '^hysim: 2 processes' containers.err || fail "hysimd did not see 2 processes from the containers"

# Per server: its own hostname, server id and GPU count, files shared through the working folder.
# (A sanitizer build preloads its runtime into sh too, whose leaks at exit are no concern here.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$hysim" run --containers "$scenario" -- /bin/sh -c 'echo "$(hostname) $HYSIM_SERVER $HYSIM_GPUS" > "host.$HYSIM_SERVER"' \
  2> sh.err || { cat sh.err; fail "sh in containers failed"; }
[[ $(cat host.0) == "server0 0 8" ]] || fail "server 0 saw '$(cat host.0)'"
[[ $(cat host.1) == "server1 1 8" ]] || fail "server 1 saw '$(cat host.1)'"

after=$(podman_state)
[[ $before == "$after" ]] || fail "left behind: $(diff <(echo "$before") <(echo "$after"))"
echo ok
