#!/usr/bin/env bash
# Application processes on two hosts, one hysimd: two network namespaces joined
# by a veth pair stand for two machines (addresses 10.231.0.1 and .2). In the
# first, `hysim run --servers 0 --endpoint tcp:10.231.0.1:PORT --token-file F`
# starts server 0 and waits; in the second, `hysim join --token-file F
# tcp:10.231.0.1:PORT 1 -- PROGRAM` starts server 1 (docs/launchers.md,
# "Several hosts"). Checks: the run's figures are those of the same run on one
# host; a process with a wrong token is refused with a message and the run goes
# on; when hysimd is killed, the other host's process says so and exits.
# usage: check_several_hosts.sh HYSIM SCENARIO(2 servers) PROGRAM WORK_DIR   (root: ip netns)
set -uo pipefail
hysim=$(realpath "$1") scenario=$(realpath "$2") prog=$(realpath "$3") work=$4
source "$(dirname "$0")/../reliability/lib.sh"
command -v ip >/dev/null || fail "ip (iproute2) is not installed"
rm -rf "$work" && mkdir -p "$work" && work=$(realpath "$work")
a=hsA$$ b=hsB$$ port=47$((RANDOM % 900 + 100))
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; }
trap cleanup EXIT
ip netns add "$a" && ip netns add "$b" || fail "cannot create network namespaces (needs root)"
ip link add "v$a" type veth peer name "v$b" || fail "cannot create a veth pair"
ip link set "v$a" netns "$a" && ip link set "v$b" netns "$b"
ip -n "$a" addr add 10.231.0.1/24 dev "v$a" && ip -n "$b" addr add 10.231.0.2/24 dev "v$b"
ip -n "$a" link set "v$a" up && ip -n "$b" link set "v$b" up
ip -n "$a" link set lo up && ip -n "$b" link set lo up
ep=tcp:10.231.0.1:$port
args=(-N 2 -i "$work/uid" -b 1M -e 8M -n 2 -w 1)
# the timed rows after the first: the first also times the ranks' start, which differs with when the other
# host's process came in
table() { grep -E "^ +[0-9]+ +[0-9]+ +float" | tail -n +2; }

# the same run on one host, for the figures
"$hysim" run "$scenario" -- "$prog" "${args[@]}" >"$work/one.out" 2>&1 || { cat "$work/one.out"; fail "the one-host run failed"; }
rm -f "$work/uid"

# two hosts
ip netns exec "$a" "$hysim" run --servers 0 --endpoint "$ep" --token-file "$work/token" "$scenario" -- "$prog" "${args[@]}" \
  >"$work/a.out" 2>&1 &
run=$!
wait_for_file "$work/token" 30 || fail "the run wrote no token file"
# a stranger with the wrong token: refused with a message, the run not disturbed
HYSIM_TOKEN=not-the-token ip netns exec "$b" "$hysim" join "$ep" 1 -- "$prog" "${args[@]}" >"$work/wrong.out" 2>&1 &&
  fail "a process with a wrong token was accepted"
grep -q "HYSIM_TOKEN is not this run's" "$work/wrong.out" || { cat "$work/wrong.out"; fail "no clear message for a wrong token"; }
ip netns exec "$b" "$hysim" join --token-file "$work/token" "$ep" 1 -- "$prog" "${args[@]}" >"$work/b.out" 2>&1 ||
  { cat "$work/b.out"; fail "the joined server failed"; }
wait $run || { cat "$work/a.out"; fail "the run failed"; }
diff <(table <"$work/one.out") <(table <"$work/a.out") || fail "two hosts give other figures than one"
grep -q "refused 1 connection with a wrong token" "$work/a.out" || fail "the wrong token was not counted"
echo "two hosts: $(table <"$work/a.out" | wc -l) rows as on one host; the wrong token refused"

# hysimd killed under a joined process (one driving its server's GPUs, waiting in hysimd): it says so and exits
rm -f "$work/uid" "$work/token"
ip netns exec "$a" "$hysim" run --servers 0 --endpoint "$ep" --token-file "$work/token" "$scenario" -- sleep 60 \
  >"$work/a2.out" 2>&1 &
run=$!
wait_for_file "$work/token" 30 || fail "the second run wrote no token file"
ip netns exec "$b" "$hysim" join --token-file "$work/token" "$ep" 1 -- "$(dirname "$prog")/allreduce_bench" -b 1G -e 1G \
  -n 100000 >"$work/b2.out" 2>&1 &
joined=$!
sleep 2
kill -9 $run
wait_gone $joined 10 || { kill -9 $joined; fail "the joined process outlived hysimd"; }
grep -q "lost connection to hysimd" "$work/b2.out" || { cat "$work/b2.out"; fail "no message for the lost connection"; }
echo "several hosts: ok"
