#!/usr/bin/env bash
# Installs the Debian packages hysim needs to build, if any are missing.
# hysim also needs the CUDA 13 toolkit (nvcc and headers) at /usr/local/cuda
# or $HYSIM_CUDA_ROOT; that does not come from Debian and is only checked.
set -euo pipefail

packages=(build-essential cmake pkg-config libns3-dev ns3 libgsl-dev
          libprotobuf-c-dev protobuf-c-compiler libyaml-dev
          clang libclang-rt-14-dev gnuplot-nox)
# hysim run --containers: podman with runc (containers/containers.conf, which
# hysim points CONTAINERS_CONF at, selects it) and catatonit for --init.
packages+=(podman runc catatonit)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "hysim: installing ${missing[*]}" >&2
  if [[ $(id -u) -eq 0 ]]; then
    sudo=()
  elif command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "hysim: missing packages ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cuda=${HYSIM_CUDA_ROOT:-/usr/local/cuda}
if [[ ! -x $cuda/bin/nvcc || ! -f $cuda/include/nccl.h ]]; then
  echo "hysim: the CUDA 13 toolkit with NCCL headers is needed at $cuda (nvcc, cuda_runtime_api.h, nccl.h);" >&2
  echo "       set HYSIM_CUDA_ROOT if it is elsewhere" >&2
  exit 1
fi
