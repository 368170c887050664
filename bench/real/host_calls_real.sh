#!/usr/bin/env bash
# The host time of every CUDA, cuBLAS and NCCL call the training examples
# make on real GPUs (bench/real/host_calls.c, preloaded): builds the library
# and runs bench/real/examples_real.sh with it, so that each example command
# runs once as is and once with its calls timed. Also runs api_cost (the
# calls in isolation, as hysim charges them) for comparison on the same host.
# usage: bench/real/host_calls_real.sh OUT_DIR [EXAMPLE...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: host_calls_real.sh OUT_DIR [EXAMPLE...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
cuda=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
so=$(mktemp -d)/host_calls.so
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I"$cuda/include" -I"$inc" -o "$so" \
  "$root/bench/real/host_calls.c" -ldl -lpthread
HOST_CALLS_SO=$so "$root/bench/real/examples_real.sh" "$out" "$@"
