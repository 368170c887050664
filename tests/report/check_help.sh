#!/usr/bin/env bash
# Per-command help with examples, the exit codes in --help, and hysim validate
# reporting every problem of a scenario at once (each with FILE:LINE:COL).
# usage: check_help.sh HYSIM WORK_DIR
set -uo pipefail
hysim=$1 work=$2
mkdir -p "$work"
for cmd in run validate plot; do
  out=$("$hysim" help $cmd) || { echo "FAIL: hysim help $cmd exits non-zero"; exit 1; }
  grep -q "^usage: hysim $cmd" <<<"$out" && grep -qi "^examples*:" <<<"$out" && grep -q "  hysim $cmd " <<<"$out" ||
    { echo "FAIL: hysim help $cmd lacks a usage line or an example:"; echo "$out"; exit 1; }
done
"$hysim" help run | grep -q -- "--report FILE.json" && "$hysim" help run | grep -q -- "--trace FILE.json" ||
  { echo "FAIL: run's help lacks --report / --trace"; exit 1; }
"$hysim" --help | grep -q "exit codes: 0 ok, 1 the program failed, 2 usage or scenario error" ||
  { echo "FAIL: --help lacks the exit codes"; exit 1; }
printf 'servers: {count: 0, gpus_per_server: 8}\ngpu: {model: H200}\nnvlink: {gbps_per_gpu: fast}\nbogus_key: 1\n' >"$work/bad.yaml"
out=$("$hysim" validate "$work/bad.yaml" 2>&1); status=$?
echo "$out"
[[ $status -eq 2 ]] || { echo "FAIL: validate of a bad scenario exits $status, not 2"; exit 1; }
for where in 1 3 4; do
  grep -qE "bad.yaml:$where:[0-9]+: " <<<"$out" || { echo "FAIL: the problem on line $where is not reported"; exit 1; }
done
grep -q "bad.yaml: 3 problems" <<<"$out" || { echo "FAIL: no count of the problems"; exit 1; }
echo "ok"
