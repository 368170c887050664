#!/usr/bin/env bash
# Fails when a C or C++ file the repository tracks differs from what its
# .clang-format (the root one for C, ns3-glue/'s for its C++) makes of it.
# usage: tools/check-format.sh [--fix]   (--fix rewrites the files instead)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "FAIL: clang-format is not installed (tools/install-deps.sh)"; exit 1; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cc')
if [[ ${1:-} == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/hysim-format.$$; then
  grep -E '^[^ ].*: error:' /tmp/hysim-format.$$ | cut -d: -f1 | sort -u | sed 's/^/FAIL: not formatted: /'
  rm -f /tmp/hysim-format.$$
  echo "run tools/check-format.sh --fix"
  exit 1
fi
rm -f /tmp/hysim-format.$$
echo "format: ok (${#files[@]} files)"
