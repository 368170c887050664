#!/usr/bin/env bash
# Builds hysim's own container image (Containerfile) from local files only:
# no registry is needed. The root file system is a skeleton whose /bin, /lib,
# /lib64 and /sbin point into /usr, which hysim bind-mounts from the host.
# usage: build-image.sh [IMAGE]   (default localhost/hysim-host)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image=${1:-localhost/hysim-host}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
root=$context/rootfs
mkdir -p "$root"/{usr,etc,tmp,proc,sys,dev,run,root}
chmod 1777 "$root/tmp"
for d in bin lib lib64 sbin; do ln -s "usr/$d" "$root/$d"; done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
cp "$here/Containerfile" "$context/Containerfile"

podman build --quiet --layers=false --tag "$image" --file "$context/Containerfile" "$context" >/dev/null
echo "built $image"
