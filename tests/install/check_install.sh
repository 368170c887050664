#!/usr/bin/env bash
# cmake --install into a fresh prefix, then use hysim as a user would: from
# PATH, on a shipped scenario, with the replacement libraries found relative to
# the installed executable; and the pkg-config file compiles a program against
# the scenario loader.
# usage: check_install.sh BUILD_DIR BENCH WORK_DIR SANITIZE(ON|OFF)
set -uo pipefail
build=$1 bench=$2 work=$3 sanitize=$4
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { echo "FAIL: cmake --install"; cat "$work/install.log"; exit 1; }
for f in bin/hysim lib/hysim/libhysim.so lib/hysim/libcudart.so.13 lib/hysim/libcuda.so.1 lib/hysim/libnccl.so.2 \
         lib/hysim/libcublas.so.13 lib/hysim/libcublasLt.so.13 lib/hysim/libcurand.so.10 \
         include/hysim/scenario.h include/hysim/fabric.h share/hysim/scenarios/h200x8.yaml lib/pkgconfig/hysim.pc; do
  [[ -e $prefix/$f ]] || { echo "FAIL: $f not installed"; exit 1; }
done
if ls "$prefix"/lib/libcudart* "$prefix"/lib/libnccl* >/dev/null 2>&1; then
  echo "FAIL: replacement CUDA libraries directly in lib/, where they would shadow a real CUDA"; exit 1
fi
export PATH=$prefix/bin:$PATH
unset HYSIM_LIB_DIR
out=$(cd "$work" && hysim run "$prefix/share/hysim/scenarios/h200x8-deterministic.yaml" -- "$bench" -b 1M -e 1M -n 1 -w 0 2>&1)
status=$?
echo "$out"
[[ $status -eq 0 ]] && grep -q "^hysim: simulated" <<<"$out" && grep -q "libhysim\|1048576" <<<"$out" ||
  { echo "FAIL: installed hysim run (status $status)"; exit 1; }
hysim validate "$prefix"/share/hysim/scenarios/*.yaml || { echo "FAIL: installed hysim validate"; exit 1; }

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
scenarios=$(pkg-config --variable=scenariosdir hysim) && [[ -f $scenarios/h200x8.yaml && $scenarios != *//* ]] ||
  { echo "FAIL: pkg-config --variable=scenariosdir hysim"; exit 1; }
cat >"$work/use.c" <<'C'
#include <stdio.h>
#include "hysim/scenario.h"
int main(int argc, char **argv)
{
    static hs_scenario sc;
    char err[4096];
    if (argc < 2 || hs_scenario_load(argv[1], &sc, err, sizeof err)) {
        fputs(err, stderr);
        return 1;
    }
    printf("%d GPUs\n", hs_scenario_gpu_count(&sc));
    return 0;
}
C
flags=()
[[ $sanitize == ON ]] && flags=(-fsanitize=address,undefined)
# shellcheck disable=SC2046
cc "${flags[@]}" -o "$work/use" "$work/use.c" $(pkg-config --cflags --libs --static hysim) ||
  { echo "FAIL: compiling against pkg-config hysim"; exit 1; }
[[ $("$work/use" "$scenarios/h200x8.yaml") == "8 GPUs" ]] || { echo "FAIL: the program built with pkg-config"; exit 1; }
echo "ok"
