#!/usr/bin/env bash
# The GPT with DDP on 2 simulated H200 timed from a profile recorded on one
# real H200 (bench/real/torch_profile_real.sh, bench/torch/*.yaml): every
# kernel is timed by the profile or its family (none by the default), and
# the mean fp32 step lies within 10 % of the real 2-GPU host's 20.748 ms
# (bench/real/data/torch_gpt_h200x2.txt; a run the profile never saw).
# usage: check_profiled.sh HYSIM SCENARIO VENV GPT
set -uo pipefail
hysim=$1 scenario=$2 venv=$3 gpt=$4
fail() { echo "FAIL: $*"; exit 1; }
[[ -x $venv/bin/torchrun ]] || fail "no PyTorch environment at $venv: run tools/install-deps.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$hysim" run "$scenario" -- "$venv/bin/torchrun" --standalone --nproc_per_node=2 "$gpt" --ddp --steps 8 --warmup 3 \
  --dtype fp32 >"$out" 2>&1 || { tail -30 "$out"; fail "the run failed"; }
grep -E "^gpt: mean|kernel time by source" "$out"
src=$(grep -m1 "kernel time by source" "$out")
[[ $src == *"default 0 kernels"* ]] || fail "kernels timed by the default: $src"
[[ $src =~ family\ ([1-9][0-9]*)\ kernels ]] || fail "no kernel timed by its family: $src"
mean=$(sed -n 's/^gpt: mean step \([0-9.]*\) ms.*/\1/p' "$out")
[[ -n $mean ]] || fail "no mean step printed"
awk -v m="$mean" 'BEGIN { exit !(m > 0.9 * 20.748 && m < 1.1 * 20.748) }' ||
  fail "mean step $mean ms, not within 10 % of the real 20.748 ms"
echo "profiled: ok"
