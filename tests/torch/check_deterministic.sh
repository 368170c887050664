#!/usr/bin/env bash
# Two runs of the GPT with DDP on 2 GPUs, on a scenario whose host clock does
# not read the real CPU (host_time: zero), print the same: every step, the
# mean, and hysim's whole summary (the simulated total, counts, notes, every
# GPU's line) but the wall time and hysim's own memory. A helper thread's
# signal outrun by hysimd once ended half the runs 10 s late (PyTorch's
# autograd engine at exit, docs/client.md, "Timed waits"), and the count of
# late threads varied.
# usage: check_deterministic.sh HYSIM SCENARIO VENV GPT
set -uo pipefail
hysim=$1 scenario=$2 venv=$3 gpt=$4
[[ -x $venv/bin/torchrun ]] || { echo "FAIL: no PyTorch environment at $venv: run tools/install-deps.sh"; exit 1; }
run() {
  "$hysim" run "$scenario" -- "$venv/bin/torchrun" --standalone --nproc_per_node=2 "$gpt" --ddp 2>&1 |
    sed 's/ in [0-9.]* s of wall time ([^)]*)//; s/ in [0-9.]* s of wall time//; s/; hysim.s peak memory [0-9]* MiB//' | grep -E '^(step [0-9]|gpt: |hysim: )'
}
first=$(run)
second=$(run)
echo "$first"
[[ $(grep -c '^step' <<<"$first") == 5 ]] || { echo "FAIL: the first run did not print steps 0 to 4"; exit 1; }
grep -q '^hysim: simulated [0-9.]* s on ' <<<"$first" || { echo "FAIL: no simulated total in the summary"; exit 1; }
if [[ $first != "$second" ]]; then
  echo "FAIL: runs differ:"
  diff <(echo "$first") <(echo "$second")
  exit 1
fi
echo "identical"
