#!/usr/bin/env bash
# The surface of the installed torch wheel that hysim must cover: every
# function its libraries (torch/lib) import from a library hysim replaces
# (the real library's exports, from the nvidia-* wheels beside torch), and
# every driver function named in c10's and torch's strings (fetched by
# name through cudaGetDriverEntryPoint). Each must be exported by hysim's
# library: implemented, or a stub that names itself when called.
# usage: check_surface.sh VENV HYSIM_LIB_DIR CUDA_INCLUDE
set -uo pipefail
venv=$1 ours=$2 inc=$3
site=$("$venv/bin/python3" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null) ||
  { echo "FAIL: no PyTorch environment at $venv: run tools/install-deps.sh"; exit 1; }
exports() { nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | sort -u; }
imports=$(for f in "$site"/torch/lib/*.so "$site"/torch/_C*.so; do
            nm -D --undefined-only "$f" | awk '{print $NF}' | sed 's/@.*//'
          done | sort -u)
fail=0 total=0
check_lib() { # REAL_LIB HYSIM_LIB EXTRA_NAMES
  local real=$1 mine=$2 want missing
  [[ -f $real ]] || { echo "FAIL: $real is not installed"; fail=1; return; }
  want=$( (comm -12 <(echo "$imports") <(exports "$real"); echo "${3:-}" | tr ' ' '\n') | grep . | sort -u)
  missing=$(comm -23 <(echo "$want") <(exports "$mine"))
  total=$((total + $(grep -c . <<<"$want")))
  printf '%-20s %4d functions used by torch' "${mine##*/}" "$(grep -c . <<<"$want")"
  if [[ -n $missing ]]; then
    echo ", missing: $(tr '\n' ' ' <<<"$missing")"
    fail=1
  else
    echo ", all there"
  fi
}
cu13=$site/nvidia/cu13/lib
check_lib "$cu13/libcudart.so.13" "$ours/libcudart.so.13"
check_lib "$cu13/libcublas.so.13" "$ours/libcublas.so.13"
check_lib "$cu13/libcublasLt.so.13" "$ours/libcublasLt.so.13"
check_lib "$cu13/libcurand.so.10" "$ours/libcurand.so.10"
check_lib "$site/nvidia/nccl/lib/libnccl.so.2" "$ours/libnccl.so.2"
check_lib "$site/nvidia/cudnn/lib/libcudnn.so.9" "$ours/libcudnn.so.9"
# Driver functions: names in the strings that cuda.h declares.
declared=$(grep -ohE '\bcu[A-Z][A-Za-z0-9_]+[[:space:]]*\(' "$inc/cuda.h" | tr -d '( \t' | sort -u)
driver=$(comm -12 <(strings "$site"/torch/lib/libc10_cuda.so "$site"/torch/lib/libtorch_cuda.so | sort -u) <(echo "$declared") |
         tr '\n' ' ')
[[ -n $driver ]] || { echo "FAIL: no driver function names found in torch's strings"; fail=1; }
# libcuda is not in the wheels: the driver's names are checked against hysim's alone.
missing=$(comm -23 <(tr ' ' '\n' <<<"$driver" | grep . | sort -u) <(exports "$ours/libcuda.so.1"))
printf '%-20s %4d driver functions named by torch' libcuda.so.1 "$(wc -w <<<"$driver")"
[[ -z $missing ]] && echo ", all there" || { echo ", missing: $(tr '\n' ' ' <<<"$missing")"; fail=1; }
# NVML: the names torch's libraries and torch.cuda fetch by name; each must be
# answered (a strong definition), not a generated stub (weak).
nvml=$( (strings "$site"/torch/lib/libc10_cuda.so "$site"/torch/lib/libtorch_cuda.so | grep -xE 'nvml[A-Za-z0-9_]+'
         grep -ohE 'nvml_h\.nvml[A-Za-z0-9_]+' "$site"/torch/cuda/*.py | sed 's/^nvml_h\.//') | sort -u)
if [[ ! -f $ours/libnvidia-ml.so.1 ]]; then
  echo "FAIL: $ours/libnvidia-ml.so.1 was not built (no nvml.h)"; fail=1
else
  missing=$(comm -23 <(echo "$nvml") <(nm -D --defined-only "$ours/libnvidia-ml.so.1" | awk '$2 == "T" {print $3}' | sort -u))
  printf '%-20s %4d NVML functions named by torch' libnvidia-ml.so.1 "$(grep -c . <<<"$nvml")"
  [[ -z $missing ]] && echo ", all answered" || { echo ", missing or stubs: $(tr '\n' ' ' <<<"$missing")"; fail=1; }
fi
((fail)) && exit 1
echo "surface: ok ($total functions imported)"
