#!/usr/bin/env bash
# Installs the Debian packages hysim needs to build, if any are missing, and
# the PyTorch environment its PyTorch demo and tests run in: a virtual
# environment at .venv/ (or $HYSIM_VENV) with tools/requirements-torch.txt,
# the stock torch wheel from PyPI and its pinned dependencies
# (HYSIM_NO_TORCH=1 leaves it out; the torch tests then fail saying so).
# hysim also needs the CUDA 13 toolkit (nvcc and headers) at /usr/local/cuda
# or $HYSIM_CUDA_ROOT; that does not come from Debian and is only checked.
set -euo pipefail

packages=(build-essential cmake pkg-config libns3-dev ns3 libgsl-dev
          libprotobuf-c-dev protobuf-c-compiler libyaml-dev
          clang clang-format libclang-rt-14-dev gnuplot-nox python3-venv)
# hysim run --containers: podman with runc (containers/containers.conf, which
# hysim points CONTAINERS_CONF at, selects it) and catatonit for --init.
packages+=(podman runc catatonit)
# hysim run -- mpirun: the MPI example (examples/mpi_allreduce_bench.cu) and its test.
packages+=(openmpi-bin libopenmpi-dev)

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

# The PyTorch environment, once per version of tools/requirements-torch.txt
# and tools/requirements-frameworks.txt (the frameworks, in the same environment).
if [[ ${HYSIM_NO_TORCH:-0} != 1 ]]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  venv=${HYSIM_VENV:-$root/.venv}
  req=$root/tools/requirements-torch.txt
  fw=$root/tools/requirements-frameworks.txt
  if ! cat "$req" "$fw" | cmp -s - "$venv/.hysim-requirements"; then
    echo "hysim: installing PyTorch and the frameworks into $venv (tools/requirements-*.txt; about 3.5 GB from PyPI)" >&2
    python3 -m venv "$venv"
    pip=("$venv/bin/python3" -m pip install -q --disable-pip-version-check)
    "${pip[@]}" -r "$req"
    # deepspeed builds against the torch just installed (no isolated build env, which would fetch another torch)
    "${pip[@]}" wheel==0.48.0
    DS_BUILD_OPS=0 "${pip[@]}" --no-build-isolation -r "$fw"
    cat "$req" "$fw" >"$venv/.hysim-requirements"
  fi
fi
