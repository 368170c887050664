#!/usr/bin/env bash
# However a run ends, nothing of the program outlives it. The program leaves processes behind that never
# register with hysimd: one in a session of its own (setsid), one whose parent exits (an orphan), one that
# spins reading the clock, and its own main process sleeping. Each case records their pids, ends the run,
# and checks that every one of them is gone:
#   TERM, INT  hysim is signalled: it stops the run, then the whole tree (SIGTERM, SIGKILL after 2 s)
#   fail       the main process exits with an error while the others run: the run fails, the tree ends
#   KILL       hysim is SIGKILLed and can do nothing: each process, having loaded hysim's libraries, notices
#              within about a second that the run is over, says so and exits; the run's folder in /tmp,
#              left behind, is removed by the next run
# usage: check_process_tree.sh HYSIM SCENARIO WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 work=$3
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 is not installed"
command -v setsid >/dev/null || fail "setsid is not installed"
rm -rf "$work" && mkdir -p "$work"

check() {
  local name=$1 pids="$work/$1.pids" out="$work/$1.out"
  local main_tail="exec sleep 60"
  [[ $name == fail ]] && main_tail="sleep 1; exit 3"
  "$hysim" run "$scenario" -- sh -c "
    setsid sleep 300 & echo \$! >>'$pids'
    (sh -c 'sleep 301 & echo \$! >>\"$pids\"; wait' &)
    python3 -c 'import time
while True: time.monotonic()' & echo \$! >>'$pids'
    echo \$\$ >>'$pids'
    echo \$HYSIM_ENDPOINT >'$work/$name.endpoint'; echo \$\$ >>'$pids'
    $main_tail" >"$out" 2>&1 &
  local hysim_pid=$!
  local deadline=$(( $(date +%s) + 30 ))
  while [[ $(cat "$pids" 2>/dev/null | wc -l) -lt 5 ]]; do
    (( $(date +%s) < deadline )) || { kill -9 $hysim_pid; fail "$name: the program never started its processes"; }
    sleep 0.05
  done
  sleep 0.3 # they run
  [[ $name != fail ]] && kill -s "$name" $hysim_pid
  wait_gone $hysim_pid 10 || { kill -9 $hysim_pid; fail "$name: hysim still runs 10 s on"; }
  wait $hysim_pid 2>/dev/null
  # after SIGKILL the processes end themselves: about a second
  local grace=0.2
  [[ $name == KILL ]] && grace=4
  local left=()
  for p in $(sort -u "$pids"); do wait_gone "$p" "$grace" || left+=("$p"); done
  if ((${#left[@]})); then
    ps -o pid,ppid,stat,etime,cmd -p "${left[@]}"
    kill -9 "${left[@]}" 2>/dev/null
    cat "$out"
    fail "$name: ${#left[@]} of the program's processes outlived the run"
  fi
  if [[ $name == KILL ]]; then
    grep -q "never registered with hysimd, and its run is over" "$out" || fail "KILL: no process said why it ended"
    # the killed run could not remove its folder: the next run does, its owner being gone
    local endpoint folder
    endpoint=$(cat "$work/$name.endpoint") folder=$(dirname "${endpoint#unix:}")
    # (another run started meanwhile may have removed it first: the same rule at work)
    "$hysim" run "$scenario" -- true >"$work/next.out" 2>&1 || { cat "$work/next.out"; fail "the next run failed"; }
    [[ ! -e $folder ]] || fail "KILL: the next run left the dead run's folder $folder"
  else
    grep -q "hysim: stopped [0-9]* process" "$out" || { cat "$out"; fail "$name: hysim did not say it stopped what was left"; }
  fi
  echo "ok: $name ($(sort -u "$pids" | wc -l) processes, none left)"
}

check TERM
check INT
check fail
check KILL
