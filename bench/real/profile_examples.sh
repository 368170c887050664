#!/usr/bin/env bash
# Records one profile database per training-example command of bench/RESULTS.md
# ("Training examples on real 2 x H200 vs hysim") on this machine's GPUs:
# bench/real/profile_real.sh once per command, each into its own folder
# OUT_DIR/N (N = the command's row, 1..11), which holds the program's own
# output as is, the log and profile_<gpu>.csv. hysim then replays each
# command with its own database (compute.profiles): the examples' own kernels
# and their cuBLAS GEMMs at the times measured here. (Rows without arguments
# there name their default --steps 6 here: profile_real.sh gives a command
# without arguments arguments of its own.)
# usage: bench/real/profile_examples.sh OUT_DIR [ROW...]   (default: every row)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: profile_examples.sh OUT_DIR [ROW...]}
shift
mkdir -p "$out"
rows=" $* "
n=0
while read -r example args; do
  n=$((n + 1))
  [[ $rows == "  " || $rows == *" $n "* ]] || continue
  mkdir -p "$out/$n"
  echo "### $n: $example $args" | tee -a "$out/rows.txt"
  # shellcheck disable=SC2086 # the arguments split as a shell would
  "$root/bench/real/profile_real.sh" "$out/$n" "$example" $args >"$out/$n/stdout.txt" 2>&1 ||
    echo "### $n failed with status $?" | tee -a "$out/rows.txt"
done <<'LIST'
mlp_train --steps 30
mlp_train --optimizer adam --steps 30
mlp_train --gpus 1 --steps 10
mlp_train --batch 512 --in 1024 --hidden 2048 --out 128 --bucket-mib 4 --steps 20 --optimizer adam --lr 3e-4
pipeline_parallel --steps 6
pipeline_parallel --micro-batches 8 --micro-batch 256 --hidden 2048 --steps 10 --lr 3e-4
tensor_parallel --steps 6
tensor_parallel --tokens 4096 --hidden 2048 --steps 10 --lr 3e-4
expert_parallel --steps 6
expert_parallel --exchange sendrecv
expert_parallel --tokens 4096 --hidden 2048 --ffn 4096 --steps 10
LIST
