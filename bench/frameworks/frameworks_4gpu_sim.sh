#!/usr/bin/env bash
# The runs of bench/real/frameworks_4gpu_real.sh under hysim on 4 simulated
# H200s (scenarios/h200x8.yaml with 4 GPUs and NVLS off, as there), beside the real host's figures in
# DATA (bench/real/data/frameworks_h200x4): kernels from hysim's database
# alone, or first from the one-GPU profile DATA/profile_NAME.csv of the same
# framework (recorded by the script's "profile" part). One row per run: real
# and simulated median step (framework_steps.py), error, peak memory.
# usage: bench/frameworks/frameworks_4gpu_sim.sh DATA HOST_TIME database|profile [RUN...]
#   (LOGS=DIR keeps each run's log there)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$(cd "${1:?usage: frameworks_4gpu_sim.sh DATA HOST_TIME database|profile [RUN...]}" && pwd)
host_time=${2:?} source=${3:?}
shift 3
hysim=${HYSIM:-$root/build/bin/hysim} venv=${HYSIM_VENV:-$root/.venv}
T=$root/tests/frameworks steps=20
work=$(mktemp -d) && cd "$work" && "$venv/bin/python3" "$T/framework_assets.py" . || exit 1
trap 'rm -rf "$work"' EXIT
scenario() { # $1: the profile, or none
  local extra=""
  [[ $source == profile && $1 != none ]] && extra="\n  profiles: $data/profile_$1.csv"
  sed "s|^  gpus_per_server: 8|  gpus_per_server: 4|; s|^  default_kernel_us: 10|&$extra|; s|^  host_time: real|  host_time: $host_time|" \
    "$root/scenarios/h200x8.yaml" >"$work/$1.yaml"
  printf 'nccl:\n  nvls: false   # as on the real host (NCCL_NVLS_ENABLE=0)\n' >>"$work/$1.yaml"
  echo "$work/$1.yaml"
}
fsdp=(--use_fsdp --fsdp_version 2 --fsdp_auto_wrap_policy TRANSFORMER_BASED_WRAP --fsdp_transformer_layer_cls_to_wrap
      LlamaDecoderLayer --fsdp_reshard_after_forward true --fsdp_state_dict_type SHARDED_STATE_DICT)
titan() { echo torchrun --standalone --nproc_per_node="$1" -m torchtitan.train --job.config_file "$T/torchtitan_debug.toml"; }
# name, profile, framework_steps.py's arguments, command
run() {
  local name=$1 prof=$2 args=$3
  shift 3
  local log=$work/$name.log
  PATH=$venv/bin:$PATH "$hysim" run "$(scenario "$prof")" -- "$@" >"$log" 2>&1
  [[ -n ${LOGS:-} ]] && mkdir -p "$LOGS" && cp "$log" "$LOGS/${name}_${host_time}_$source.log"
  local real sim
  real=$("$venv/bin/python3" "$root/bench/frameworks/framework_steps.py" "$data/$name.log" $args)
  sim=$("$venv/bin/python3" "$root/bench/frameworks/framework_steps.py" "$log" $args 2>&1)
  local dflt
  dflt=$(sed -n 's/.*default \([0-9]*\) kernels.*/\1/p' "$log" | head -1)
  python3 - "$name" "$real" "$sim" "${dflt:-?}" <<'PY'
import re, sys
name, real, sim, dflt = sys.argv[1:]
num = lambda s: float(re.search(r"median step ([\d.]+)", s).group(1)) if "median step" in s else None
mem = lambda s: re.search(r"peak (.*)$", s).group(1) if "peak" in s else "-"
r, s = num(real), num(sim)
err = f"{100 * (s / r - 1):+.1f} %" if r and s else "-"
print(f"| {name} | {r:.2f} ms | {s:.2f} ms | {err} | {mem(real)} | {mem(sim)} | {dflt} |" if s else f"| {name} | {r} | failed: {sim[-120:]} |")
PY
}
want() { [[ $# -eq 0 ]] || [[ " $* " == *" $name "* ]]; }
echo "| run ($host_time, $source) | real | hysim | error | real peak | hysim peak | default kernels |"
echo "| --- | ---: | ---: | ---: | --- | --- | ---: |"
for name in titan_8b_4gpu titan_8b_fsdp_4gpu titan_debug_4gpu titan_debug_1gpu megatron_4gpu megatron_1gpu hf_fsdp_4gpu \
  deepspeed_zero3_4gpu; do
  want "$@" || continue
  case $name in
  titan_8b_4gpu) run $name none "2048 2" $(titan 4) --model.flavor 8B --training.local_batch_size 1 \
                   --training.seq_len 2048 --training.steps 10 ;;
  titan_8b_fsdp_4gpu) run $name none "8192 1" $(titan 4) --model.flavor 8B --training.local_batch_size 1 \
                        --training.seq_len 8192 --training.steps 10 --parallelism.tensor_parallel_degree 1 ;;
  titan_debug_4gpu) run $name titan_debug "2048 2" $(titan 4) --training.steps $steps ;;
  titan_debug_1gpu) run $name titan_debug "2048 1" $(titan 1) --training.steps $steps \
                      --parallelism.tensor_parallel_degree 1 ;;
  megatron_4gpu) run $name megatron "" torchrun --standalone --nproc_per_node=4 "$T/megatron_gpt.py" $steps 2 2 2 0 ;;
  megatron_1gpu) run $name megatron "" torchrun --standalone --nproc_per_node=1 "$T/megatron_gpt.py" $steps 1 1 1 ;;
  hf_fsdp_4gpu) run $name hf "" accelerate launch --num_processes 4 --mixed_precision bf16 "${fsdp[@]}" "$T/hf_causal_lm.py" $steps ;;
  deepspeed_zero3_4gpu) run $name deepspeed "32" deepspeed --num_gpus 4 "$T/deepspeed_zero3.py" --steps $steps \
                          --deepspeed_config "$T/deepspeed_zero3.json" ;;
  esac
done
