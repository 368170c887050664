#!/usr/bin/env bash
# examples/torch/gpt.py under hysim, timed from the one-GPU profiles that
# bench/real/torch_accuracy_real.sh recorded on a real 2 x H200 host, beside
# that host's own step times (bench/real/data/torch_accuracy_h200_NAME.txt):
# 1 GPU (the profiled configuration), DDP on 2 and FSDP2 on 2 (held out).
# Prints one row per run: real and simulated mean step, error, peak memory,
# and the kernels the default timed.
# usage: bench/torch/accuracy.sh [HOST_TIME]   (real, the default, or zero)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
venv=${HYSIM_VENV:-.venv}
host_time=${1:-real}
data=bench/real/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-6s %-5s %-9s %10s %10s %8s %22s %8s\n' size dtype run real_ms hysim_ms error "peak MiB real/hysim" default
for name in small large; do
  args=()
  [[ $name == large ]] && args=(--layers 8 --dim 1024 --heads 16)
  real=$data/torch_accuracy_h200_$name.txt
  for dtype in fp32 bf16; do
    sc=$tmp/$name-$dtype.yaml
    sed "s|^  default_kernel_us: 10|  default_kernel_us: 10\n  profiles: $root/$data/profile_gpt_h200_${name}_$dtype.csv|; s|^  host_time: real|  host_time: $host_time|" \
      scenarios/h200x8.yaml >"$sc"
    for run in 1gpu ddp fsdp; do
      case $run in
        1gpu) head="## 1 GPU, $dtype"; cmd=("$venv/bin/python3" examples/torch/gpt.py) ;;
        ddp) head="## 2 GPUs DDP, $dtype"; cmd=("$venv/bin/torchrun" --standalone --nproc_per_node=2 examples/torch/gpt.py --ddp) ;;
        fsdp) head="## 2 GPUs FSDP, $dtype"; cmd=("$venv/bin/torchrun" --standalone --nproc_per_node=2 examples/torch/gpt.py --fsdp) ;;
      esac
      line=$(awk -v h="$head" '$0 == h {f = 1; next} f && /^gpt: mean/ {print; exit}' "$real")
      real_ms=$(sed -n 's/^gpt: mean step \([0-9.]*\) ms.*/\1/p' <<<"$line")
      real_mem=$(sed -n 's/.*peak memory \([0-9.]*\) MiB allocated.*/\1/p' <<<"$line")
      out=$(build/bin/hysim run "$sc" -- "${cmd[@]}" "${args[@]}" --steps 12 --warmup 4 --dtype "$dtype" 2>&1)
      sim_ms=$(sed -n 's/^gpt: mean step \([0-9.]*\) ms.*/\1/p' <<<"$out")
      sim_mem=$(sed -n 's/^gpt: mean.*peak memory \([0-9.]*\) MiB allocated.*/\1/p' <<<"$out")
      dflt=$(sed -n 's/.*default \([0-9]*\) kernels.*/\1/p' <<<"$out" | head -1)
      err=$(awk -v r="$real_ms" -v s="$sim_ms" 'BEGIN { if (r > 0 && s > 0) printf "%+.1f%%", 100 * (s / r - 1); else print "-" }')
      printf '%-6s %-5s %-9s %10s %10s %8s %22s %8s\n' "$name" "$dtype" "$run" "$real_ms" "${sim_ms:--}" "$err" \
        "$real_mem/${sim_mem:--}" "${dflt:--}"
    done
  done
done
