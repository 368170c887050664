#!/usr/bin/env bash
# The command line's contract: help, exit codes, scenario errors with
# FILE:LINE:COL, a missing program named.
# usage: check_cli.sh HYSIM SCENARIO_DIR WORK_DIR
set -uo pipefail
hysim=$1 scenarios=$2 work=$3
fail=0
expect() { # expect STATUS PATTERN -- command...
  local want=$1 pattern=$2; shift 3
  local out status
  out=$("$@" 2>&1); status=$?
  if [[ $status -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> status $status (want $want), output:"; echo "$out"; fail=1
  else
    echo "ok: $*"
  fi
}
mkdir -p "$work"
printf 'servers: {count: 1, gpus_per_server: 8}\ngpu: {model: H200}\nnvlink: {gbps_per_gpu: fast}\n' >"$work/bad.yaml"
expect 0 "usage: hysim" -- "$hysim" --help
expect 0 "usage: hysim run" -- "$hysim" help run
expect 2 "unknown command" -- "$hysim" frobnicate
expect 2 "no .-- PROGRAM. after the scenario" -- "$hysim" run "$scenarios/h200x8.yaml"
expect 2 "no program after .--." -- "$hysim" run "$scenarios/h200x8.yaml" --
expect 2 "no .--. between the scenario and the program" -- "$hysim" run "$scenarios/h200x8.yaml" /bin/true
expect 2 "no scenario given" -- "$hysim" run -- /bin/true
expect 2 "unknown option --bogus" -- "$hysim" run --bogus "$scenarios/h200x8.yaml" -- /bin/true
expect 2 "--report /no-such-folder/r.json: cannot write in /no-such-folder" -- \
  "$hysim" run --report /no-such-folder/r.json "$scenarios/h200x8.yaml" -- /bin/true
expect 0 "queues.png +queue depth of the 8 ports that queued most" -- "$hysim" help plot
expect 0 "^hysim [0-9]" -- "$hysim" --version
expect 0 "--version" -- "$hysim" --help
expect 0 "h200x8.yaml: ok" -- "$hysim" validate "$scenarios/h200x8.yaml"
expect 2 "^hysim validate: unknown option --strict" -- "$hysim" validate --strict "$scenarios/h200x8.yaml"
expect 2 "bad.yaml:3:[0-9]+: .*gbps_per_gpu" -- "$hysim" validate "$work/bad.yaml"
expect 2 "bad.yaml:3:[0-9]+: .*gbps_per_gpu" -- "$hysim" run "$work/bad.yaml" -- /bin/true
expect 2 "cannot run no-such-program" -- "$hysim" run "$scenarios/h200x8.yaml" -- no-such-program
expect 0 "simulated" -- "$hysim" run "$scenarios/h200x8.yaml" -- /bin/true
expect 1 "exited with status 3" -- "$hysim" run "$scenarios/h200x8.yaml" -- /bin/sh -c "exit 3"
# A signal to hysim is a simulation error (3), named once with hysim's prefix.
expect 3 "^hysim: simulation failed: stopped by signal 2 \(Interrupt\)" -- \
  timeout --preserve-status -s INT 1 "$hysim" run "$scenarios/h200x8.yaml" -- sleep 30
# A run shorter than 0.1 s of wall time shows it with four decimals, not "0.00 s".
out=$("$hysim" run "$scenarios/h200x8.yaml" -- /bin/true 2>&1)
wall=$(sed -n 's/^hysim: simulated [0-9.]* s in \([0-9.]*\) s of wall time.*/\1/p' <<<"$out")
if [[ -z $wall ]] || { awk -v w="$wall" 'BEGIN { exit !(w < 0.1) }' && [[ ! $wall =~ ^0\.[0-9]{4}$ ]]; }; then
  echo "FAIL: wall time \"$wall\" in:"; echo "$out"; fail=1
else
  echo "ok: wall time $wall s"
fi
exit $fail
