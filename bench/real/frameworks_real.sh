#!/usr/bin/env bash
# Hugging Face's Trainer (tests/frameworks/hf_causal_lm.py, DDP on 1 and 2 GPUs)
# and DeepSpeed ZeRO-3 (tests/frameworks/deepspeed_zero3.py, 2 GPUs) on real
# GPUs, as tests/frameworks runs them under hysim, for bench/RESULTS.md.
# The frameworks come from wheels (bench/real/frameworks_install.sh). The
# Trainer's script prints the median of its steps from the third on;
# DeepSpeed prints each step's samples per second.
# usage: bench/real/frameworks_real.sh OUT [STEPS]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: frameworks_real.sh OUT [STEPS]}
steps=${2:-30}
mkdir -p "$out"
source "$root/bench/real/frameworks_install.sh" # py, site, PYTHONPATH
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvidia-smi topo -m; "$py" -c 'import torch, transformers, deepspeed; print(torch.__version__, transformers.__version__, deepspeed.__version__)'; } >"$out/machine.txt" 2>&1
work=$(mktemp -d) && cd "$work" && "$py" "$root/tests/frameworks/framework_assets.py" .
for n in 1 2; do
  # one GPU: only one visible, or the Trainer spreads a lone process over all with nn.DataParallel
  [[ $n == 1 ]] && visible=0 || visible=0,1
  for s in "$steps"; do
    CUDA_VISIBLE_DEVICES=$visible "$py" -m accelerate.commands.launch --num_processes $n --mixed_precision bf16 \
      "$root/tests/frameworks/hf_causal_lm.py" "$s" >"$out/hf_ddp_${n}gpu.log" 2>&1
  done
done
"$py" -m deepspeed.launcher.runner --num_gpus 2 "$root/tests/frameworks/deepspeed_zero3.py" --steps "$steps" \
  --deepspeed_config "$root/tests/frameworks/deepspeed_zero3.json" >"$out/deepspeed_zero3_2gpu.log" 2>&1
grep -hE "^model|train_runtime|step time|global_step=$steps,|Error" "$out"/*.log
