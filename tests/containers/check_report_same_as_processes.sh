#!/usr/bin/env bash
# The 2-server example with --out as plain processes and in two containers
# (hysim run --containers), on a scenario whose host clock is zero: the
# reports and the traces must be the same bytes (no pid, host name or path in
# them), and each run's host.json holds its own wall time.
# usage: check_report_same_as_processes.sh HYSIM CONTAINERS_DIR PODMAN_DIR SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 CONTAINERS_DIR=$2 PODMAN_DIR=$3 scenario=$4 prog=$5 work=$6
. "$(dirname "$0")/lib.sh"
require_podman
rm -rf "$work" && mkdir -p "$work" && cd "$work"
args=(-N 2 -i uid -b 1M -e 16M -f 4 -n 2 -w 1)

"$hysim" run --out processes "$scenario" -- "$prog" "${args[@]}" > processes.out 2> processes.err ||
  { cat processes.err; fail "process mode failed"; }
"$hysim" run --containers --out containers "$scenario" -- "$prog" "${args[@]}" > containers.out 2> containers.err ||
  { cat containers.err; fail "container mode failed"; }
cat containers.err
grep -q '^hysim: 2 processes' containers.err || fail "hysimd did not see 2 processes from the containers"
for f in report.json trace.json; do
  cmp "processes/$f" "containers/$f" ||
    { diff "processes/$f" "containers/$f" | head -20; fail "$f differs between processes and containers"; }
done
grep -qE '"wall_s": [0-9.]+' containers/host.json || fail "containers/host.json lacks wall_s"
echo "reports and traces identical in both modes"
