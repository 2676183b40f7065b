#!/bin/sh
# Puts `hetccl-info --markdown` (the table generated from the components'
# *_params.def, joined in src/core/all_params.cc) between the params
# markers of docs/configuration.md; with --check, only says whether that
# table is current (the unit test params_table runs that).
#   scripts/update-params-table.sh [--check] [HETCCL_INFO] [DOC]
set -eu
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
info=${1:-$root/build/tools/hetccl-info}
doc=${2:-$root/docs/configuration.md}
begin='<!-- params:begin (generated: scripts/update-params-table.sh) -->'
end='<!-- params:end -->'

table=$(mktemp)
updated=$(mktemp)
trap 'rm -f "$table" "$updated"' EXIT
"$info" --markdown >"$table"
grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc" || {
  echo "$doc lacks the lines '$begin' and '$end'" >&2
  exit 1
}
awk -v begin="$begin" -v end="$end" -v table="$table" '
  $0 == begin { print; while ((getline line < table) > 0) print line; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }
' "$doc" >"$updated"

if [ "$check" = 1 ]; then
  if ! cmp -s "$doc" "$updated"; then
    echo "$doc's parameter table differs from 'hetccl-info --markdown':" >&2
    diff -u "$doc" "$updated" >&2 || true
    echo "regenerate it with: scripts/update-params-table.sh [path/to/hetccl-info]" >&2
    exit 1
  fi
  exit 0
fi
cp "$updated" "$doc"
