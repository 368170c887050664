#!/usr/bin/env bash
# Runs one program with the replacement libraries under the fake hysimd
# (fake_daemon.c) and checks what happened.
#
# usage: run_with_daemon.sh [options] -- PROGRAM [ARGS...]
#   --daemon PATH        the fake daemon (omit with --no-daemon)
#   --daemon-arg ARG     passed to the fake daemon (repeatable)
#   --no-daemon          run without HYSIM_ENDPOINT
#   --env NAME=VALUE     set for the program (repeatable)
#   --status N           expected exit status (default 0)
#   --stdout REGEX       the program's stdout must match (grep -E; repeatable)
#   --no-stdout REGEX    its stdout must not match (repeatable)
#   --stderr REGEX       its stderr must match (repeatable)
#   --stderr-count N:TEXT  TEXT (fixed string) appears on exactly N lines of stderr
#   --no-stderr REGEX    its stderr must not match (repeatable)
#   --log REGEX          the daemon's log must match (repeatable)
#
# Environment (set by CTest): HS_TEST_LIBDIR, the directory with libcudart.so.13
# etc. (LD_LIBRARY_PATH); HS_TEST_PRELOAD, what to LD_PRELOAD (libhysim.so, and
# in sanitizer builds the ASan runtime first, which must come first).
# The program sees HYSIM_ENDPOINT, HYSIM_SERVER=0, HYSIM_GPUS=2 and
# HYSIM_TEST_LOG (the daemon's log) unless --env says otherwise.
set -uo pipefail

daemon= no_daemon=0 status=0
daemon_args=() envs=() want_out=() no_out=() want_err=() count_err=() no_err=() want_log=()
while (($#)); do
  case $1 in
    --daemon) daemon=$2; shift 2 ;;
    --daemon-arg) daemon_args+=("$2"); shift 2 ;;
    --no-daemon) no_daemon=1; shift ;;
    --env) envs+=("$2"); shift 2 ;;
    --status) status=$2; shift 2 ;;
    --stdout) want_out+=("$2"); shift 2 ;;
    --no-stdout) no_out+=("$2"); shift 2 ;;
    --stderr) want_err+=("$2"); shift 2 ;;
    --stderr-count) count_err+=("$2"); shift 2 ;;
    --no-stderr) no_err+=("$2"); shift 2 ;;
    --log) want_log+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_with_daemon.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
(($#)) || { echo "run_with_daemon.sh: no program given" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/hs-interpose.XXXXXX")
dpid=
cleanup() {
  [[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

sock=$dir/hysimd.sock
prog_env=(-u HYSIM_ENDPOINT -u HYSIM_HOST_TIME -u HYSIM_EPOCH_NS
          LD_LIBRARY_PATH="${HS_TEST_LIBDIR:?}" LD_PRELOAD="${HS_TEST_PRELOAD:-}")
if ((!no_daemon)); then
  "${daemon:?--daemon is required}" --endpoint "unix:$sock" --log "$dir/log" "${daemon_args[@]}" \
    2>"$dir/daemon.err" &
  dpid=$!
  for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
  [[ -S $sock ]] || { echo "FAIL: the fake daemon did not start"; cat "$dir/daemon.err"; exit 1; }
  prog_env+=(HYSIM_ENDPOINT="unix:$sock" HYSIM_SERVER=0 HYSIM_GPUS=2 HYSIM_TEST_LOG="$dir/log")
fi

# Only the program gets the preload (not timeout).
timeout 120 env "${prog_env[@]}" "${envs[@]}" "$@" >"$dir/out" 2>"$dir/err"
rc=$?
if [[ -n $dpid ]]; then
  # The daemon ends once its sessions closed; give it a moment to write the log.
  for _ in $(seq 40); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.05; done
fi

fail=0
check() { echo "FAIL: $*"; fail=1; }
((rc == status)) || check "exit status $rc, expected $status"
for re in "${want_out[@]}"; do grep -Eq -- "$re" "$dir/out" || check "stdout does not match: $re"; done
for re in "${no_out[@]}"; do ! grep -Eq -- "$re" "$dir/out" || check "stdout matches: $re"; done
for re in "${want_err[@]}"; do grep -Eq -- "$re" "$dir/err" || check "stderr does not match: $re"; done
for re in "${no_err[@]}"; do ! grep -Eq -- "$re" "$dir/err" || check "stderr matches: $re"; done
for c in "${count_err[@]}"; do
  n=$(grep -cF -- "${c#*:}" "$dir/err")
  ((n == ${c%%:*})) || check "stderr has '${c#*:}' on $n lines, expected ${c%%:*}"
done
for re in "${want_log[@]}"; do grep -Eq -- "$re" "$dir/log" 2>/dev/null || check "daemon log does not match: $re"; done

if ((fail)); then
  echo "--- stdout"; cat "$dir/out"
  echo "--- stderr"; cat "$dir/err"
  [[ -f $dir/log ]] && { echo "--- daemon log (last 60 lines)"; tail -n 60 "$dir/log"; }
  [[ -s $dir/daemon.err ]] && { echo "--- daemon stderr"; cat "$dir/daemon.err"; }
  exit 1
fi
cat "$dir/out"
echo "ok"
