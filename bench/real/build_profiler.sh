# Sourced by the scripts of bench/real that profile on a machine with a real
# NVIDIA GPU (and no ns-3): builds the profile recorder (interpose/profile/,
# libhysim_profile.so, against the CUPTI found there) and `hysim profile`
# alone (tools/profile_main.c) into $w (default /tmp/hysim-profile); sets
# nvcc, cuda, nccl_h, nccl_so, w, and gpu (the first GPU's model in lower
# case, "h200": what the scripts name their files by).
root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/^NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda=$(cd "$(dirname "$nvcc")/.." && pwd)
first() { find "$@" -print -quit 2>/dev/null || true; } # the first match only
cupti_h=$(first "$cuda/include/" "$cuda/extras/CUPTI/include/" -name cupti.h) # / : lib64, include are often links
cupti_so=$(first "$cuda/lib64/" "$cuda/extras/CUPTI/lib64/" "$cuda/lib/" -name 'libcupti.so*')
nccl_h=$(dirname "$(first / -name nccl.h -path '*include*')")
nccl_so=$(dirname "$(first / -name 'libnccl.so.2*')")
w=${w:-/tmp/hysim-profile}
mkdir -p "$w/bin" "$w/lib"
cflags=(-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/interpose/profile" -I"$root/bridge/compute"
        -I"$root/interpose/blas" -I"$root/include" -I"$root/tools")
gcc "${cflags[@]}" -shared -fPIC -fvisibility=hidden -I"$(dirname "$cupti_h")" -I"$cuda/include" \
  -o "$w/lib/libhysim_profile.so" "$root/interpose/profile/cupti_recorder.c" \
  "$root/interpose/profile/cublas_forward.c" "$root/interpose/blas/cublas_gemm_shape.c" \
  "$root/interpose/profile/gemm_join.c" "$root/interpose/profile/profile_aggregate.c" \
  "$root/bridge/compute/profile_db.c" "$root/bridge/compute/gemm_dtype.c" \
  -L"$(dirname "$cupti_so")" -Wl,-rpath,"$(dirname "$cupti_so")" -lcupti -L"$cuda/lib64/stubs" -lcuda -lpthread -ldl
gcc "${cflags[@]}" -o "$w/bin/hysim-profile" "$root/tools/profile_main.c" "$root/tools/profile.c" \
  "$root/bridge/compute/profile_db.c" -ldl
