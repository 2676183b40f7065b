#!/bin/sh
# Puts `hetccl-info --markdown` (the table generated from src/util/params.def)
# between the params markers of README.md; with --check, only says whether
# the README's table is current (the unit test readme_params runs that).
#   scripts/update-readme-params.sh [--check] [HETCCL_INFO] [README]
set -eu
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
info=${1:-$root/build/tools/hetccl-info}
readme=${2:-$root/README.md}
begin='<!-- params:begin (generated: scripts/update-readme-params.sh) -->'
end='<!-- params:end -->'

table=$(mktemp)
updated=$(mktemp)
trap 'rm -f "$table" "$updated"' EXIT
"$info" --markdown >"$table"
grep -qxF "$begin" "$readme" && grep -qxF "$end" "$readme" || {
  echo "$readme lacks the lines '$begin' and '$end'" >&2
  exit 1
}
awk -v begin="$begin" -v end="$end" -v table="$table" '
  $0 == begin { print; while ((getline line < table) > 0) print line; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }
' "$readme" >"$updated"

if [ "$check" = 1 ]; then
  if ! cmp -s "$readme" "$updated"; then
    echo "README.md's parameter table differs from 'hetccl-info --markdown':" >&2
    diff -u "$readme" "$updated" >&2 || true
    echo "regenerate it with: scripts/update-readme-params.sh [path/to/hetccl-info]" >&2
    exit 1
  fi
  exit 0
fi
cp "$updated" "$readme"
