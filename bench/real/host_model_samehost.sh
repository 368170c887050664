#!/usr/bin/env bash
# The host model checked on the CPU it models: on a real GPU host, the same
# examples/torch/gpt.py run for real on one GPU and under hysim (host_time
# real, its kernels timed from a profile recorded on that GPU just before),
# alternately, so that both see the same CPU, Python and torch. What differs
# is then hysim's host clock, not the machine's speed (bench/RESULTS.md,
# "Host time on the real host's own CPU").
# usage: bench/real/host_model_samehost.sh OUT_DIR BUNDLE [ROUNDS]
#   BUNDLE: what bench/real/hysim_bundle.sh made; PYTHON: torch's python
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?OUT_DIR}
bundle=$(cd "${2:?BUNDLE}" && pwd)
rounds=${3:-2}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0
source "$root/bench/real/build_profiler.sh"
hysim=(env LD_LIBRARY_PATH="$bundle/deps:${LD_LIBRARY_PATH:-}" "$bundle/hysim/bin/hysim")
cd "$root"
log=$out/host_model_samehost.txt
steps=(--steps 20 --warmup 4)
declare -A sizes=(
  [tiny]="--layers 2 --dim 256 --heads 4 --seq 128 --batch 4"
  [small]=""
  [large]="--layers 8 --dim 1024 --heads 16"
)
mean() { sed -n 's/^gpt: mean step \([0-9.]*\) ms.*/\1/p'; }
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)," \
       "torch $("$py" -c 'import torch; print(torch.__version__)'), $(nproc) CPUs:" \
       "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
  echo "# command: bench/real/host_model_samehost.sh OUT BUNDLE $rounds"
  for cfg in tiny:bf16 small:bf16 large:bf16 small:fp32; do
    name=${cfg%:*} dtype=${cfg#*:}
    read -ra args <<<"${sizes[$name]}"
    db=$out/profile_$name-$dtype.csv
    CUDA_VISIBLE_DEVICES=0 "$w/bin/hysim-profile" --out "$db" -- \
      "$py" examples/torch/gpt.py "${args[@]}" "${steps[@]}" --dtype "$dtype" >/dev/null 2>&1
    for host in real zero; do
      sed "s|^  default_kernel_us: 10|  default_kernel_us: 10\n  profiles: $db|; s|^  host_time: real|  host_time: $host|" \
        scenarios/h200x8.yaml >"$out/h200-$name-$dtype-$host.yaml"
    done
    for ((r = 1; r <= rounds; r++)); do
      # odd rounds run the real step first, even rounds hysim first: neither always follows the other
      for which in $( ((r % 2)) && echo real sim || echo sim real); do
        if [[ $which == real ]]; then
          real=$(CUDA_VISIBLE_DEVICES=0 "$py" examples/torch/gpt.py "${args[@]}" "${steps[@]}" --dtype "$dtype" 2>&1 | mean)
        else
          sim=$("${hysim[@]}" run "$out/h200-$name-$dtype-real.yaml" -- "$py" examples/torch/gpt.py "${args[@]}" \
            "${steps[@]}" --dtype "$dtype" 2>&1 | tee "$out/sim-$name-$dtype-$r.log" | mean)
        fi
      done
      echo "$name $dtype round $r: real ${real:-?} ms, hysim host real ${sim:-?} ms"
    done
    zero=$("${hysim[@]}" run "$out/h200-$name-$dtype-zero.yaml" -- "$py" examples/torch/gpt.py "${args[@]}" \
      "${steps[@]}" --dtype "$dtype" 2>&1 | mean)
    echo "$name $dtype: hysim host zero ${zero:-?} ms (the GPU's share)"
  done
} 2>&1 | tee "$log"
# the profiles, scenarios and hysim's logs in one file beside the table
tar -C "$out" -czf "$out/../host_model_samehost_files.tgz" --exclude=host_model_samehost.txt . &&
  find "$out" -maxdepth 1 -type f ! -name host_model_samehost.txt -delete && mv "$out/../host_model_samehost_files.tgz" "$out/"
