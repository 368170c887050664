#!/usr/bin/env bash
# Runs a framework's own launcher under hysim in a fresh working folder that
# holds the generated assets (framework_assets.py), then checks the log with
# check_log.py. The launcher and python3 are the environment's (VENV/bin).
# usage: run_framework.sh HYSIM SCENARIO VENV WORKDIR CHECK [CHECK_ARGS...] -- COMMAND [ARGS]
#   CHECK names check_log.py's check; COMMAND's exit status goes to it. hysim's report and trace go to
#   WORKDIR/run; when the check fails, the longest waits in the trace are listed (long_waits.py).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hysim=$1 scenario=$2 venv=$3 work=$4
shift 4
check=()
while [[ $# -gt 0 && $1 != -- ]]; do
  check+=("$1")
  shift
done
shift # --
if [[ ! -x $venv/bin/python3 ]] || ! "$venv/bin/python3" -c 'import torch' 2>/dev/null; then
  echo "FAIL: no PyTorch environment at $venv: run tools/install-deps.sh (README, the two commands)"
  exit 1
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$venv/bin/python3" "$here/framework_assets.py" . || exit 1
PATH=$venv/bin:$PATH "$hysim" run --out run "$scenario" -- "$@" >out.log 2>&1
rc=$?
grep -v '^W[0-9]\{4\} \|Setting OMP_NUM_THREADS\|^\*\*\*\*' out.log | tail -30
"$venv/bin/python3" "$here/check_log.py" "${check[@]}" out.log "$rc" && exit 0
# failed: which waits moved the processes' clocks (the run's trace stays in WORKDIR/run)
[[ -f run/trace.json ]] && "$venv/bin/python3" "$here/long_waits.py" run
exit 1
