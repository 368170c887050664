#!/usr/bin/env bash
# The wire's generated types (Hysim__*, HYSIM__*) and the headers that bring them in (messages.h,
# hysim.pb-c.h) appear in bridge/ only in the wire and in the session layer (docs/architecture.md,
# "The wire stops at the session"). Prints each file that breaks the rule, then "layout: ok" or fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
files=$(find bridge -name '*.[ch]' | sort)
bad=$(grep -lE '\bHysim__|\bHYSIM__[A-Z]|#include "(messages\.h|hysim\.pb-c\.h)"' $files |
  grep -vE '^bridge/wire/|^bridge/daemon/session(_wire)?\.[ch]$')
if [ -n "$bad" ]; then
  echo "layout: the wire's types outside bridge/wire and the session layer:"
  echo "$bad"
  exit 1
fi
echo "layout: ok"
