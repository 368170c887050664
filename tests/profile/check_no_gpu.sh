#!/usr/bin/env bash
# `hysim profile` where no real GPU can be reached stops before starting the
# program, with a message that says so, and leaves no database behind:
#   1. hysim's own libcuda.so.1 first on the library path (as inside a
#      `hysim run`): refused, naming it (deterministic on any machine);
#   2. the machine as it is: skipped (77) where an NVIDIA GPU is present;
#   3. no recorder library (HYSIM_LIB_DIR elsewhere): refused, naming it;
#   4. no program: a usage error.
# usage: check_no_gpu.sh HYSIM LIB_DIR TMPDIR
set -uo pipefail
hysim=$1 lib=$2 tmp=$3
mkdir -p "$tmp"
db=$tmp/never.csv
rm -f "$db"
fail=0
expect() { # expect WHAT STATUS PATTERN -- COMMAND...
  local what=$1 want=$2 pattern=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  echo "$what: exit $rc: $out" | head -3
  if [ "$rc" != "$want" ] || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAIL: $what: want exit $want and \"$pattern\""
    fail=1
  fi
  if [ -e "$db" ]; then
    echo "FAIL: $what: a database was written"
    fail=1
  fi
}
expect "hysim's libcuda" 2 "hysim profile: no CUDA GPU here (libcuda.so.1 is hysim's replacement" -- \
  env LD_LIBRARY_PATH="$lib" "$hysim" profile --out "$db" -- /bin/true
expect "no recorder" 2 "libhysim_profile.so not found" -- \
  env HYSIM_LIB_DIR="$tmp" "$hysim" profile --out "$db" -- /bin/true
expect "no program" 2 "no program given" -- "$hysim" profile --out "$db"
expect "bad option" 2 "unexpected argument \"--bogus\"" -- "$hysim" profile --bogus -- /bin/true
[ "$fail" = 0 ] || exit 1
if [ -e /dev/nvidia0 ] || ls /proc/driver/nvidia/gpus/* >/dev/null 2>&1; then
  echo "an NVIDIA GPU is present: the plain no-GPU case is not checked here"
  exit 77
fi
expect "this machine" 2 "hysim profile: no CUDA GPU here (" -- "$hysim" profile --out "$db" -- /bin/true
exit $fail
