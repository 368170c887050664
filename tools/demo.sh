#!/usr/bin/env bash
# README command 1: install what is missing (the PyTorch environment too),
# build, and run the demos on the default scenario (one server, 8 simulated
# H200): the shipped all-reduce benchmark, then examples/torch/gpt.py trained
# with DDP under torchrun, each printing what its own clocks measured.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh >&2 # the build's progress on stderr: stdout is the programs' own output
echo "+ build/bin/hysim run scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 1G" >&2
build/bin/hysim run scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 1G
venv=${HYSIM_VENV:-.venv}
if [[ ${HYSIM_NO_TORCH:-0} == 1 ]]; then
  echo "hysim: HYSIM_NO_TORCH=1: the PyTorch demo is left out" >&2
  exit 0
fi
echo "+ build/bin/hysim run scenarios/h200x8.yaml -- $venv/bin/torchrun --standalone --nproc_per_node=8 examples/torch/gpt.py --ddp" >&2
exec build/bin/hysim run scenarios/h200x8.yaml -- "$venv/bin/torchrun" --standalone --nproc_per_node=8 \
  examples/torch/gpt.py --ddp
