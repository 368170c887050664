#!/usr/bin/env bash
# The runs of bench/real/frameworks_real.sh under hysim, on SCENARIO: Hugging
# Face's Trainer (DDP on 1 and 2 GPUs) and DeepSpeed ZeRO-3 on 2 GPUs; prints the same
# lines (bench/RESULTS.md "Frameworks against real H200s").
# usage: bench/frameworks/frameworks_sim.sh SCENARIO OUT [STEPS]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
scenario=${1:?usage: frameworks_sim.sh SCENARIO OUT [STEPS]} out=${2:?} steps=${3:-30}
hysim=${HYSIM:-$root/build/bin/hysim} venv=${HYSIM_VENV:-$root/.venv}
mkdir -p "$out" && out=$(cd "$out" && pwd) && scenario=$(cd "$(dirname "$scenario")" && pwd)/$(basename "$scenario")
work=$(mktemp -d) && cd "$work" && "$venv/bin/python3" "$root/tests/frameworks/framework_assets.py" .
run() { PATH=$venv/bin:$PATH "$hysim" run "$scenario" -- "$@"; }
for n in 1 2; do
  # one GPU: only one visible, or the Trainer spreads a lone process over all with nn.DataParallel
  [[ $n == 1 ]] && visible=0 || visible=0,1
  for s in "$steps"; do
    CUDA_VISIBLE_DEVICES=$visible run accelerate launch --num_processes $n --mixed_precision bf16 "$root/tests/frameworks/hf_causal_lm.py" "$s" \
      >"$out/hf_ddp_${n}gpu.log" 2>&1
  done
done
run deepspeed --num_gpus 2 "$root/tests/frameworks/deepspeed_zero3.py" --steps "$steps" \
  --deepspeed_config "$root/tests/frameworks/deepspeed_zero3.json" >"$out/deepspeed_zero3_2gpu.log" 2>&1
cd "$out" && for f in *.log; do echo "$f: $(grep -hE "train_runtime|step time|global_step=$steps,|Error" "$f" | tr '\n' ' ')"; done
rm -rf "$work"
