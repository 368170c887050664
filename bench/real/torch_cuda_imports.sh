#!/usr/bin/env bash
# Which CUDA runtime, driver and NCCL functions PyTorch's libraries import, on
# a machine with PyTorch: the surface an unmodified torch program reaches
# through hysim's replacement libraries. Per library under torch/lib (and the
# nvidia-* wheels beside it), the undefined dynamic symbols named cuda*, cu*
# or nccl*; then the driver functions named in their strings (fetched at run
# time through cudaGetDriverEntryPoint or cuGetProcAddress, not imported).
# usage: bench/real/torch_cuda_imports.sh [OUT_DIR]
set -euo pipefail
out=${1:-.}
mkdir -p "$out"
lib=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__) + "/lib")')
site=$(dirname "$(dirname "$lib")")
{
  echo "# $(date -u +%F) torch $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)')"
  echo "# command: bench/real/torch_cuda_imports.sh"
  for f in "$lib"/*.so* "$site"/nvidia/*/lib/*.so*; do
    [ -f "$f" ] || continue
    syms=$(nm -D --undefined-only "$f" 2>/dev/null | awk '{print $NF}' | grep -E '^(cuda|cu[A-Z]|nccl)' | sed 's/@.*//' | sort -u | tr '\n' ' ' || true)
    [ -n "$syms" ] && echo "imports ${f#$site/}: $syms"
  done
  for f in "$lib"/libc10_cuda.so "$lib"/libtorch_cuda.so; do
    [ -f "$f" ] || continue
    echo "strings ${f#$site/}: $(strings "$f" | grep -E '^cu[A-Z][A-Za-z0-9_]+$' | sort -u | tr '\n' ' ' || true)"
  done
} > "$out/torch_cuda_imports.txt"
wc -c "$out/torch_cuda_imports.txt"
