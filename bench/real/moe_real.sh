#!/usr/bin/env bash
# Mixtures of experts on one real GPU, for bench/RESULTS.md "A mixture of
# experts on one real H200": TorchTitan's DeepSeek-V3 debug model (as
# tests/frameworks runs it, on one GPU: no expert parallelism) as it is and
# under `hysim profile`, and a small Hugging Face Mixtral
# (bench/frameworks/hf_moe_step.py) with its eager experts and with
# grouped_mm. Logs and the profile go to OUT; bench/frameworks/moe_sim.sh
# runs the same under hysim. With "large": only a Mixtral large enough that
# its grouped GEMMs, not the host, set its step (hf_moe_step.py ... large), as
# it is and under `hysim profile`, and with DDP on 2 GPUs where the host has
# them (bench/RESULTS.md "Grouped GEMMs").
# usage: bench/real/moe_real.sh OUT [STEPS [large]]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: moe_real.sh OUT [STEPS [large]]} steps=${2:-20} size=${3:-}
mkdir -p "$out" && out=$(cd "$out" && pwd)
source "$root/bench/real/frameworks_install.sh" # py, site, PYTHONPATH, run
source "$root/bench/real/build_profiler.sh" >/dev/null # $w/bin/hysim-profile
export CUDA_VISIBLE_DEVICES=0
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  "$py" -c 'import torch, torchtitan, transformers; print(torch.__version__, transformers.__version__)'
} >"$out/machine.txt" 2>&1
summary="step: +$steps |median|Error|exit" # run's lines
if [[ $size == large ]]; then
  step=("$py" "$root/bench/frameworks/hf_moe_step.py" grouped_mm "$steps" large)
  run hf_moe_large "${step[@]}"
  run hf_moe_large_profiled "$w/bin/hysim-profile" --out "$out/profile_hf_moe_large.csv" -- "${step[@]}"
  if (($(nvidia-smi -L | wc -l) >= 2)); then
    CUDA_VISIBLE_DEVICES=0,1 run hf_moe_large_ddp2 "$py" -m torch.distributed.run --standalone --nproc_per_node=2 \
      "${step[@]:1}"
  fi
  exit 0
fi
work=$(mktemp -d) && cd "$work" && "$py" "$root/tests/frameworks/framework_assets.py" . || exit 1
titan=("$py" -m torch.distributed.run --standalone --nproc_per_node=1 -m torchtitan.train
       --job.config_file "$root/tests/frameworks/torchtitan_debug.toml" --model.name deepseek_v3
       --model.flavor debugmodel --parallelism.tensor_parallel_degree 1 --training.steps "$steps")
run titan_moe_1gpu "${titan[@]}"
run titan_moe_1gpu_profiled "$w/bin/hysim-profile" --out "$out/profile_titan_moe.csv" -- "${titan[@]}"
for impl in eager grouped_mm; do
  run hf_moe_${impl} "$py" "$root/bench/frameworks/hf_moe_step.py" "$impl" "$steps"
done
run hf_moe_grouped_mm_profiled "$w/bin/hysim-profile" --out "$out/profile_hf_moe.csv" -- \
  "$py" "$root/bench/frameworks/hf_moe_step.py" grouped_mm "$steps"
rm -rf "$work"
