#!/usr/bin/env bash
# An installed hysim with the shared libraries its programs need that are not
# part of a base system (ns-3, GSL, protobuf-c, libyaml, SQLite), so that hysim
# runs on a machine without them, e.g. a GPU host, beside the real runs there.
# usage: bench/real/hysim_bundle.sh [DIR]   (default build-bundle; run after a build)
#   on the other machine: LD_LIBRARY_PATH=DIR/deps DIR/hysim/bin/hysim run ...
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/build-bundle}
rm -rf "$dir"
cmake --install "$root/build" --prefix "$dir/hysim" >/dev/null
mkdir -p "$dir/deps"
find "$dir/hysim" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
  xargs -0 ldd 2>/dev/null |
  awk '$3 ~ /^\// && $1 ~ /^lib(ns3|gsl|protobuf-c|yaml|sqlite3)/ {print $3}' | sort -u |
  xargs -I{} cp -L {} "$dir/deps/"
du -sh "$dir" | sed 's/^/bundle: /'
