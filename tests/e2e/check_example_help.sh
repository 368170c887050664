#!/usr/bin/env bash
# Every shipped example answers --help with its usage on stdout and status 0
# (README: "`--help` lists each one's sizes"), and an unknown option with
# status 2. They run without hysim here: --help exits before any CUDA call.
# usage: check_example_help.sh EXAMPLE...
set -uo pipefail
fail=0
for prog in "$@"; do
  name=$(basename "$prog")
  out=$("$prog" --help 2>/dev/null); status=$?
  if [[ $status -ne 0 ]] || ! grep -q "^usage: $name " <<<"$out"; then
    echo "FAIL: $name --help -> status $status, stdout:"; echo "$out"; fail=1
  else
    echo "ok: $name --help"
  fi
  "$prog" --no-such-option >/dev/null 2>&1; status=$?
  if [[ $status -ne 2 ]]; then
    echo "FAIL: $name --no-such-option -> status $status (want 2)"; fail=1
  else
    echo "ok: $name --no-such-option"
  fi
done
exit $fail
