#!/usr/bin/env bash
# The frameworks of tests/frameworks on all the GPUs of one host (4) and on
# one, for bench/RESULTS.md "Frameworks on 4 real H200s". Two parts, each a
# few minutes:
#   parallel  on all GPUs: TorchTitan's Llama 3 8B (FSDP2 x TP 2, 1 x 2048
#             tokens per rank) and debug model (FSDP2 x TP 2), Megatron-Core's
#             GPT (TP 2 x interleaved PP 2), the Trainer with FSDP2 and
#             DeepSpeed ZeRO-3, each as its test launches it;
#   profile   on one GPU: TorchTitan's debug model and Megatron's GPT (TP 1 x
#             PP 1) as they are and under `hysim profile`, and the Trainer's
#             and DeepSpeed's profiles, for hysim to time the parallel runs;
#   large     on all GPUs: TorchTitan's Llama 3 8B with FSDP2 alone, 1 x 8192
#             tokens per rank (bound by the GPUs, where the 2048-token TP run
#             above is bound by the host).
# Logs and profiles (profile_*.csv) go to OUT. NVLink multicast stays off.
# usage: bench/real/frameworks_4gpu_real.sh OUT parallel|profile|large [STEPS]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: frameworks_4gpu_real.sh OUT parallel|profile|large [STEPS]} part=${2:?} steps=${3:-20}
mkdir -p "$out" && out=$(cd "$out" && pwd)
source "$root/bench/real/frameworks_install.sh" # py, site, PYTHONPATH, run
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
n=$(nvidia-smi -L | wc -l)
T=$root/tests/frameworks
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvidia-smi topo -m
  "$py" -c 'import torch, torchtitan, megatron.core, transformers, deepspeed as d; print(torch.__version__, d.__version__)'
} >"$out/machine.txt" 2>&1
work=$(mktemp -d) && cd "$work" && "$py" "$T/framework_assets.py" . || exit 1
summary="step: +$steps |step: +10 |iteration +$steps/|step time|global_step=$steps,|Error|exit" # run's lines
# each sets cmd, the command line of one run
torchrun() { cmd=("$py" -m torch.distributed.run --standalone --nproc_per_node="$1" "${@:2}"); }
titan() { torchrun "$1" -m torchtitan.train --job.config_file "$T/torchtitan_debug.toml" "${@:2}"; }
megatron() { torchrun "$1" "$T/megatron_gpt.py" "$steps" "${@:2}"; }
hf() {
  cmd=("$py" -m accelerate.commands.launch --num_processes "$1" --mixed_precision bf16 "${@:2}" "$T/hf_causal_lm.py" "$steps")
}
ds() {
  cmd=("$py" -m deepspeed.launcher.runner --num_gpus "$1" "$T/deepspeed_zero3.py" --steps "$steps"
       --deepspeed_config "$T/deepspeed_zero3.json")
}
fsdp=(--use_fsdp --fsdp_version 2 --fsdp_auto_wrap_policy TRANSFORMER_BASED_WRAP --fsdp_transformer_layer_cls_to_wrap
      LlamaDecoderLayer --fsdp_reshard_after_forward true --fsdp_state_dict_type SHARDED_STATE_DICT)
case $part in
parallel)
  titan "$n" --model.flavor 8B --training.local_batch_size 1 --training.seq_len 2048 --training.steps 10
  run titan_8b_${n}gpu "${cmd[@]}"
  titan "$n" --training.steps "$steps" && run titan_debug_${n}gpu "${cmd[@]}"
  megatron "$n" 2 2 2 0 && run megatron_${n}gpu "${cmd[@]}"
  hf "$n" "${fsdp[@]}" && run hf_fsdp_${n}gpu "${cmd[@]}"
  ds "$n" && run deepspeed_zero3_${n}gpu "${cmd[@]}"
  ;;
profile)
  source "$root/bench/real/build_profiler.sh" >/dev/null # $w/bin/hysim-profile
  export CUDA_VISIBLE_DEVICES=0
  profiled() { run "$1_1gpu_profiled" "$w/bin/hysim-profile" --out "$out/profile_$1.csv" -- "${cmd[@]}"; }
  titan 1 --training.steps "$steps" --parallelism.tensor_parallel_degree 1
  run titan_debug_1gpu "${cmd[@]}" && profiled titan_debug
  megatron 1 1 1 1 && run megatron_1gpu "${cmd[@]}" && profiled megatron
  hf 1 && profiled hf
  ds 1 && profiled deepspeed
  ;;
large)
  titan "$n" --model.flavor 8B --training.local_batch_size 1 --training.seq_len 8192 --training.steps 10 \
    --parallelism.tensor_parallel_degree 1
  run titan_8b_fsdp_${n}gpu "${cmd[@]}"
  ;;
*) echo "frameworks_4gpu_real.sh: unknown part '$part' (parallel, profile or large)" >&2; exit 2 ;;
esac
rm -rf "$work"
