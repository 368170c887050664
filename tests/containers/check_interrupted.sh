#!/usr/bin/env bash
# Interrupts a container run of the 2-server example mid-run and checks that
# hysim exits non-zero, says why, and leaves no container, network or image
# behind (podman ps -a, network ls and images compared before and after).
#   MODE kill:   server 1's container is killed; hysim must name server 1.
#   MODE sigint: hysim itself gets SIGINT, as from Ctrl-C.
# usage: check_interrupted.sh MODE HYSIM CONTAINERS_DIR PODMAN_DIR SCENARIO PROGRAM WORK_DIR
set -euo pipefail
mode=$1 hysim=$2 CONTAINERS_DIR=$3 PODMAN_DIR=$4 scenario=$5 prog=$6 work=$7
. "$(dirname "$0")/lib.sh"
require_podman
rm -rf "$work" && mkdir -p "$work" && cd "$work"
before=$(podman_state)

# Sizes from 64 KiB up: about 10 s of wall time if nothing stops it. hysimd
# looks at its children between the stretches of simulation it runs for the
# work queued so far, so the first sizes (short stretches) are where to cut in.
"$hysim" run --containers "$scenario" -- "$prog" -N 2 -i uid -b 64K -e 64M -f 2 -n 2 -w 1 > out 2> err &
pid=$!
cleanup() { # only when the check fails half-way: stop hysim and whatever it started
  kill -KILL "$pid" 2>/dev/null || true
  podman ps -aq --filter label=hysim.run | xargs -r podman rm -f -t 0 > /dev/null
}
trap cleanup EXIT

# Both containers running and server 0's first row printed: the program is under way.
for _ in $(seq 600); do
  grep -q '^ *[0-9]' out && break
  kill -0 "$pid" 2>/dev/null || { cat err; fail "hysim ended before the program printed a row"; }
  sleep 0.05
done
[[ $(running_hysim_containers | wc -l) == 2 ]] || { cat out err; fail "the two containers are not running mid-run"; }
case $mode in
  kill)
    victim=$(running_hysim_containers | grep -- '-server1$')
    podman kill --signal KILL "$victim" > /dev/null ;;
  sigint) kill -INT "$pid" ;;
  *) fail "unknown mode $mode" ;;
esac

status=0
for _ in $(seq 900); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "hysim still runs 90 s after the $mode"
wait "$pid" || status=$?
trap - EXIT
cat err
(( status != 0 )) || fail "hysim exited with 0 after the $mode"
if [[ $mode == kill ]]; then
  grep -Eq '^hysim: server 1 \(pid [0-9]+\) exited with status 137' err || fail "hysim did not report that server 1 died"
  grep -q 'server 1' <(grep '^hysim: simulation failed' err) || fail "the simulation error does not name server 1"
fi

after=$(podman_state)
[[ $before == "$after" ]] || fail "left behind: $(diff <(echo "$before") <(echo "$after"))"
echo "ok: exit status $status, nothing left behind"
