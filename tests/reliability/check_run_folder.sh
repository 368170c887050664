#!/usr/bin/env bash
# `hysim run` makes a private folder in /tmp for hysimd's socket; however the
# run ends (the program succeeds, fails, crashes, or hysim gets SIGTERM), the
# folder and the socket in it must be gone when hysim exits, and the program
# must not outlive it. The program writes the HYSIM_ENDPOINT it was given, which
# names the folder.
# usage: check_run_folder.sh HYSIM SCENARIO WORKDIR
set -uo pipefail
hysim=$1 scenario=$2 work=$3
source "$(dirname "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"
failed=0

# check NAME WANT_STATUS PROGRAM_TAIL [SIGNAL]: runs
# `sh -c 'echo $HYSIM_ENDPOINT >FILE; echo $$ >PIDFILE; TAIL'` under hysim, sends SIGNAL to
# hysim once the program has started, and checks the folder and the program's pid.
check() {
  local name=$1 want=$2 tail=$3 sig=${4:-}
  local endpoint_file="$work/$name.endpoint" pid_file="$work/$name.pid"
  "$hysim" run "$scenario" -- /bin/sh -c \
    "echo \"\$HYSIM_ENDPOINT\" >'$endpoint_file'; echo \$\$ >'$pid_file'; $tail" >"$work/$name.out" 2>&1 &
  local hysim_pid=$!
  wait_for_file "$pid_file" 30 || { kill -9 $hysim_pid; fail "$name: the program never started"; }
  [[ -n $sig ]] && kill -s "$sig" $hysim_pid
  wait_gone $hysim_pid 30 || { kill -9 $hysim_pid; fail "$name: hysim still runs 30 s on"; }
  wait $hysim_pid
  local status=$? endpoint folder program_pid
  endpoint=$(cat "$endpoint_file")
  folder=$(dirname "${endpoint#unix:}")
  program_pid=$(cat "$pid_file")
  if [[ $endpoint != unix:/tmp/hysim-* ]]; then
    echo "FAIL: $name: unexpected endpoint '$endpoint'"; failed=1
  elif [[ -e $folder ]]; then
    echo "FAIL: $name: $folder is still there after hysim exited:"; ls -la "$folder"; failed=1
    rm -rf "$folder"
  elif alive "$program_pid"; then
    echo "FAIL: $name: the program (pid $program_pid) outlived hysim"; kill -9 "$program_pid"; failed=1
  elif [[ $status -ne $want ]]; then
    echo "FAIL: $name: exit status $status, expected $want"; cat "$work/$name.out"; failed=1
  else
    echo "ok: $name (status $status, $folder removed)"
  fi
}

check success 0 "exit 0"
check failure 1 "exit 3"
check crash 1 "kill -SEGV \$\$"
check sigterm 3 "exec sleep 60" TERM
exit $failed
