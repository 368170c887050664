#!/usr/bin/env bash
# What a simulated PyTorch training step costs this machine: the 8-GPU DDP
# GPT (examples/torch/gpt.py) under hysim run, 5 and then 15 steps; the wall
# time per step is the difference over the 10 extra steps (start-up, imports
# and the first steps' graph builds cancel); each run twice, the faster kept. Peak RSS of hysim (the daemon
# and the fabric run inside it) and of the largest torch process, sampled
# from /proc every 0.2 s. host_time: zero (scenarios/h200x8-deterministic.yaml),
# so that the simulated steps are the same in both runs.
# usage: bench/torch/gpt_cost.sh [BUILD_DIR] [VENV]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build} venv=${2:-.venv}
scenario=scenarios/h200x8-deterministic.yaml

run() { # STEPS: prints "WALL_S HYSIM_RSS_KB TORCH_RSS_KB"
  local t0 t1 pid hysim_rss=0 torch_rss=0
  t0=$(date +%s.%N)
  "$build/bin/hysim" run "$scenario" -- "$venv/bin/torchrun" --standalone --nproc_per_node=8 \
    examples/torch/gpt.py --ddp --steps "$1" --warmup 2 >/tmp/hysim_gpt_cost.$$ 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    local r
    r=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status 2>/dev/null || echo 0)
    ((r > hysim_rss)) && hysim_rss=$r
    for p in $(pgrep -f "examples/torch/gpt.py" || true); do
      r=$(awk '/VmRSS/ {print $2}' /proc/"$p"/status 2>/dev/null || echo 0)
      ((r > torch_rss)) && torch_rss=$r
    done
    sleep 0.2
  done
  wait "$pid" || { cat /tmp/hysim_gpt_cost.$$; exit 1; }
  t1=$(date +%s.%N)
  grep -q "^step $(($1 - 1)):" /tmp/hysim_gpt_cost.$$ || { echo "the run did not print its last step"; exit 1; }
  grep -E '^gpt: mean' /tmp/hysim_gpt_cost.$$ >&2
  rm -f /tmp/hysim_gpt_cost.$$
  echo "$(echo "$t1 - $t0" | bc) $hysim_rss $torch_rss"
}
# Each twice, the faster kept: a first run also pays for a cold page cache.
read -r w5 h5 t5 <<<"$(run 5)"
read -r w15 h15 t15 <<<"$(run 15)"
read -r v5 _ _ <<<"$(run 5)"
read -r v15 _ _ <<<"$(run 15)"
w5=$(echo "if ($v5 < $w5) $v5 else $w5" | bc)
w15=$(echo "if ($v15 < $w15) $v15 else $w15" | bc)
per_step=$(echo "scale=3; ($w15 - $w5) / 10" | bc)
echo "8-GPU DDP GPT under hysim ($(nproc) cores): 5 steps ${w5} s, 15 steps ${w15} s of wall time:" \
     "${per_step} s of wall time per simulated step"
echo "peak RSS: hysim $(( (h15 > h5 ? h15 : h5) / 1024 )) MiB, largest torch process $(( (t15 > t5 ? t15 : t5) / 1024 )) MiB"
