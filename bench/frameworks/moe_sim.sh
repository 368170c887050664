#!/usr/bin/env bash
# The runs of bench/real/moe_real.sh under hysim on this machine: TorchTitan's
# DeepSeek-V3 debug model and the Hugging Face Mixtral of hf_moe_step.py on one
# simulated H200, GPU time alone (host_time zero) and with this machine's CPU
# (real), kernels from hysim's database or from the one-GPU profile the real
# run recorded (DATA/profile_*.csv). Prints one line per run.
# usage: bench/frameworks/moe_sim.sh DATA [STEPS]   (DATA: bench/real/data/moe_h200)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$(cd "${1:?usage: moe_sim.sh DATA [STEPS]}" && pwd) steps=${2:-20}
hysim=${HYSIM:-$root/build/bin/hysim} venv=${HYSIM_VENV:-$root/.venv}
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT && cd "$work" || exit 1
"$venv/bin/python3" "$root/tests/frameworks/framework_assets.py" . >/dev/null || exit 1
scenario() { # host_time, profile (or "") -> a scenario file's path
  local f=$work/$1${2:+_$(basename "$2" .csv)}.yaml
  printf 'gpu: {model: H200}\nservers: {count: 1, gpus_per_server: 8}\nrun: {host_time: %s, seed: 1}\n' "$1" >"$f"
  [[ -n $2 ]] && printf 'compute: {profiles: %s}\n' "$2" >>"$f"
  echo "$f"
}
kind() { [[ -n $1 ]] && echo profile || echo database; }
titan=(torchrun --standalone --nproc_per_node=1 -m torchtitan.train --job.config_file "$root/tests/frameworks/torchtitan_debug.toml"
       --model.name deepseek_v3 --model.flavor debugmodel --parallelism.tensor_parallel_degree 1 --training.steps "$steps")
for host in zero real; do
  for prof in "" "$data/profile_titan_moe.csv"; do
    PATH=$venv/bin:$PATH "$hysim" run "$(scenario $host "$prof")" -- "${titan[@]}" >titan.log 2>&1
    tps=$(sed 's/\x1b\[[0-9;]*m//g' titan.log | grep -o "step: *[0-9]* .*tps: [0-9,]*" | awk '$2 >= 3 {gsub(",", "", $NF); print $NF}' |
          sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    echo "titan_moe host=$host kernels=$(kind "$prof"): median tps $tps ($(awk -v t="$tps" 'BEGIN {printf "%.2f", 2048e3 / t}') ms a step)"
  done
done
for impl in eager grouped_mm; do
  for host in zero real; do
    for prof in "" "$data/profile_hf_moe.csv"; do
      [[ $impl == eager && -n $prof ]] && continue
      line=$(PATH=$venv/bin:$PATH "$hysim" run "$(scenario $host "$prof")" -- python3 "$root/bench/frameworks/hf_moe_step.py" "$impl" "$steps" 2>&1 | grep "median")
      echo "hf_moe $impl host=$host kernels=$(kind "$prof"): $line"
    done
  done
done
