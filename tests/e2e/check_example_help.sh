#!/usr/bin/env bash
# Every shipped example answers --help with its usage on stdout and status 0
# (README: "`--help` lists each one's sizes"), and an unknown option with
# status 2, and a training example a --steps that is not a whole number of
# at least 1 with status 2 and a message naming the option. They run without
# hysim here: these exit before any CUDA call.
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
  # a training example's --steps that is not a whole number: named, status 2 (atoi would read 0 or 8)
  if grep -q -- "--steps" <<<"$out"; then
    for bad in abc 8x 0; do
      err=$("$prog" --steps "$bad" 2>&1 >/dev/null); status=$?
      if [[ $status -ne 2 ]] || ! grep -q "^$name: --steps: expected a whole number of at least 1, got \"$bad\"" <<<"$err"; then
        echo "FAIL: $name --steps $bad -> status $status, stderr:"; echo "$err"; fail=1
      else
        echo "ok: $name --steps $bad"
      fi
    done
  fi
done
exit $fail
