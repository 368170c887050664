#!/usr/bin/env bash
# Runs a PyTorch command under hysim with the project's environment (.venv/,
# tools/requirements-torch.txt), and checks its output.
# usage: run_torch.sh HYSIM SCENARIO VENV WANT_REGEX [COUNT] -- PROGRAM [ARGS]
#   PROGRAM is python3 or torchrun, found in VENV/bin, or a command found in
#   PATH (sh). The run must exit 0 and print WANT_REGEX on at least COUNT
#   lines (default 1).
set -uo pipefail
hysim=$1 scenario=$2 venv=$3 want=$4
shift 4
count=1
if [[ $1 != -- ]]; then
  count=$1
  shift
fi
shift # --
if [[ ! -x $venv/bin/python3 ]] || ! "$venv/bin/python3" -c 'import torch' 2>/dev/null; then
  echo "FAIL: no PyTorch environment at $venv: run tools/install-deps.sh (README, the two commands)"
  exit 1
fi
prog=$1
shift
[[ -x $venv/bin/$prog ]] && prog=$venv/bin/$prog
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$hysim" run "$scenario" -- "$prog" "$@" >"$out" 2>&1
rc=$?
grep -v '^W[0-9]\{4\} ' "$out" | grep -v 'Setting OMP_NUM_THREADS\|^\*\*\*\*' | tail -40
got=$(grep -cE "$want" "$out")
fail=0
[[ $rc == 0 ]] || { echo "FAIL: exit status $rc"; fail=1; }
((got >= count)) || { echo "FAIL: '$want' on $got lines, expected at least $count"; fail=1; }
((fail)) && exit 1
echo ok
