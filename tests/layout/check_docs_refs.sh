#!/usr/bin/env bash
# Every reference the code and the docs make to docs/ resolves in the repository: docs/NAME.md exists, and
# where a section is named ('docs/NAME.md, "Section"') a heading of that file holds it (docs/architecture.md);
# nothing cites a design document outside the repository (../shared, DESIGN.md).
# Prints each broken one, then "docs refs: ok" or fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
files=$(find bridge interpose ns3-glue tools tests bench scenarios containers examples include docs README.md \
  -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.sh' -o -name '*.py' -o -name '*.md' \
  -o -name '*.cu' -o -name '*.yaml' -o -name 'CMakeLists.txt' \) 2>/dev/null | sort)
bad=0 n=0
while IFS= read -r ref; do
  n=$((n + 1))
  file=${ref%%,*}
  section=$(sed -n 's/.*, "\(.*\)"$/\1/p' <<<"$ref")
  if [ ! -f "$file" ]; then
    echo "docs refs: $ref: no such file"
    bad=1
  elif [ -n "$section" ] && ! grep '^#' "$file" | grep -qF -- "$section"; then
    echo "docs refs: $ref: no such section"
    bad=1
  fi
done < <(grep -hoE 'docs/[a-z_]+\.md(, "[^"]+")?' $files | sort -u)
outside=$(grep -lE '\.\./shared/|DESIGN\.md' $files | grep -v '^tests/layout/')
[ -z "$outside" ] || { echo "docs refs: citing documents outside the repository:"; echo "$outside"; bad=1; }
[ "$bad" = 0 ] || exit 1
echo "docs refs: ok ($n references)"
