#!/usr/bin/env bash
# Runs the same program twice on a scenario whose host clock does not read the
# real CPU and requires byte-identical output.
# usage: check_deterministic.sh HYSIM SCENARIO PROGRAM [ARGS]
set -euo pipefail
hysim=$1 scenario=$2
shift 2
first=$("$hysim" run "$scenario" -- "$@")
second=$("$hysim" run "$scenario" -- "$@")
echo "$first"
if [[ "$first" != "$second" ]]; then
  echo "runs differ:"
  diff <(echo "$first") <(echo "$second") || true
  exit 1
fi
[[ $(echo "$first" | grep -vc '^#') -ge 3 ]] || { echo "too few result rows"; exit 1; }
echo "identical"
