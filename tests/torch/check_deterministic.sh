#!/usr/bin/env bash
# Two runs of the GPT with DDP on 2 GPUs, on a scenario whose host clock does
# not read the real CPU (host_time: zero), print the same steady-state step
# times (steps 2 to 4), mean and counts of kernels, copies and collectives.
# Not the warm-up steps: on a loaded machine a thread the interposer cannot
# see running (cuDNN's graph builds, the autograd engine's first start) may
# let a watchdog's timed wait run to its deadline there (docs/time.md, "Late
# threads"); nor the simulated total, which a watchdog's wait pending at
# exit may reach too.
# usage: check_deterministic.sh HYSIM SCENARIO VENV GPT
set -uo pipefail
hysim=$1 scenario=$2 venv=$3 gpt=$4
[[ -x $venv/bin/torchrun ]] || { echo "FAIL: no PyTorch environment at $venv: run tools/install-deps.sh"; exit 1; }
run() {
  "$hysim" run "$scenario" -- "$venv/bin/torchrun" --standalone --nproc_per_node=2 "$gpt" --ddp 2>&1 |
    grep -E '^(step [2-9]|gpt: mean)|^hysim: [0-9]+ process'
}
first=$(run)
second=$(run)
echo "$first"
[[ $(grep -c '^step' <<<"$first") == 3 ]] || { echo "FAIL: the first run did not print steps 2 to 4"; exit 1; }
if [[ $first != "$second" ]]; then
  echo "FAIL: runs differ:"
  diff <(echo "$first") <(echo "$second")
  exit 1
fi
echo "identical"
