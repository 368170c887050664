#!/usr/bin/env bash
# What recording a profile costs in GPU time: examples/torch/gpt.py with 12
# layers (dim 768, 12 heads: GPT-2 small's shape) on one real GPU, as is and
# under `hysim profile`, each timed whole (the GPU is held that long), in
# bf16 and fp32; and hysim's run of the same script from that profile on the
# same host's CPU (bench/RESULTS.md, "What recording a profile costs").
# usage: bench/real/profile_cost_real.sh OUT_DIR [BUNDLE]   (BUNDLE: bench/real/hysim_bundle.sh's; PYTHON)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT_DIR}
bundle=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0
source "$root/bench/real/build_profiler.sh"
cd "$root"
gpt=(examples/torch/gpt.py --layers 12 --dim 768 --heads 12 --steps 12 --warmup 4)
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >"$tmp" 2>&1 || { cat "$tmp"; return 1; }; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'; }
tmp=$(mktemp)
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)," \
       "torch $("$py" -c 'import torch; print(torch.__version__)')"
  echo "# command: bench/real/profile_cost_real.sh OUT${bundle:+ BUNDLE}; script: ${gpt[*]}"
  for dtype in bf16 fp32; do
    db=$out/profile_gpt12_$dtype.csv
    t=$(secs env CUDA_VISIBLE_DEVICES=0 "$py" "${gpt[@]}" --dtype "$dtype")
    echo "$dtype as is: $t s whole; $(grep '^gpt: mean' "$tmp")"
    t=$(secs env CUDA_VISIBLE_DEVICES=0 "$w/bin/hysim-profile" --out "$db" -- "$py" "${gpt[@]}" --dtype "$dtype")
    echo "$dtype under hysim profile: $t s whole; $(grep '^gpt: mean' "$tmp"); $(grep -vc '^#' "$db") keys"
    if [ -n "$bundle" ]; then
      sed "s|^  default_kernel_us: 10|  default_kernel_us: 10\n  profiles: $db|" scenarios/h200x8.yaml >"$out/h200.yaml"
      t=$(secs env LD_LIBRARY_PATH="$bundle/deps:${LD_LIBRARY_PATH:-}" "$bundle/hysim/bin/hysim" run "$out/h200.yaml" -- \
        "$py" "${gpt[@]}" --dtype "$dtype")
      echo "$dtype under hysim run (this CPU, the profile): $t s whole; $(grep '^gpt: mean' "$tmp")"
    fi
  done
} 2>&1 | tee "$out/profile_cost.txt"
rm -f "$tmp" "$out/h200.yaml"
