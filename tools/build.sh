#!/usr/bin/env bash
# Installs what is missing and builds hysim into build/ (or $HYSIM_BUILD_DIR).
# Extra arguments are passed to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
dir=${HYSIM_BUILD_DIR:-build}
cmake -S . -B "$dir" -DHYSIM_CUDA_ROOT="${HYSIM_CUDA_ROOT:-/usr/local/cuda}" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
