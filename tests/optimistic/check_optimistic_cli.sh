#!/usr/bin/env bash
# run.mode: optimistic through the real `hysim run`. An optimistic run says so
# in its summary and report. A fork that fails ends the run within seconds,
# non-zero, with a message naming it (HYSIM_FAULT_FORK=1: the first fork
# fails with EAGAIN):
#   1. optimistic mode: the speculation's fork (rank 0 waits on an all-reduce
#      while rank 1 still runs, so its answer needs a speculation);
#   2. exact mode, worker-mode fabric: the fabric worker's checkpoint fork;
#   3. optimistic with the worker-mode fabric is refused, with the reason.
# usage: check_optimistic_cli.sh HYSIM OPTIMISTIC.yaml EXACT.yaml PROGRAM WORKDIR
set -uo pipefail
hysim=$1 optimistic=$2 exact=$3 prog=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

# run NAME EXPECTED-TEXT ENV... -- ARGS...: hysim must exit non-zero within 20 s with the text on stderr
run() {
  local name=$1 want=$2; shift 2
  local start=$SECONDS
  timeout 20 env "$@" 2>"$work/$name.stderr"
  local status=$?
  cat "$work/$name.stderr"
  echo "$name: exit status $status after $((SECONDS - start)) s"
  [[ $status -ne 124 ]] || fail "$name: hysim still ran after 20 s"
  [[ $status -ne 0 ]] || fail "$name: hysim exited with status 0"
  grep -qF "$want" "$work/$name.stderr" || fail "$name: no \"$want\" on stderr"
}

# a run that goes through, with a trace (link sampling runs in the
# speculation's fork too): the summary line and the report's mode
"$hysim" run --out "$work/out" "$optimistic" -- "$prog" busy 0 "$work" 2>"$work/ok.stderr" ||
  { cat "$work/ok.stderr"; fail "an optimistic run failed"; }
cat "$work/ok.stderr"
grep -q "^hysim: optimistic mode: [0-9]* answers ahead of the safe time, [0-9]* later revised" "$work/ok.stderr" ||
  fail "no optimistic-mode line in the summary"
grep -q '"mode": {"name": "optimistic", "optimistic_answers": [0-9]*, "answers_revised": [0-9]*' "$work/out/report.json" ||
  fail "the report lacks mode.name optimistic and its counts"

run speculation "hysim: simulation failed: fork failed (run.mode: optimistic" \
  HYSIM_FAULT_FORK=1 "$hysim" run "$optimistic" -- "$prog" stall
run checkpoint "fork for a checkpoint failed: Resource temporarily unavailable" \
  HYSIM_FAULT_FORK=1 HYSIM_FABRIC_WORKER=1 "$hysim" run "$exact" -- "$prog" stall
run refused "run.mode: optimistic does not work with the worker-mode fabric" \
  HYSIM_FABRIC_WORKER=1 "$hysim" run "$optimistic" -- "$prog" stall
echo ok
