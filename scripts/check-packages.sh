#!/usr/bin/env bash
# Checks the Debian packages the way a cluster engineer meets them: builds
# them from BUILD_DIR (scripts/build-packages.sh), checks them with lintian
# (no error), unpacks them into a scratch root (dpkg -x), and from there
#   - builds and runs the consumers of scripts/check-install.sh
#     (find_package(HetCCL) and pkg-config);
#   - runs a program linked against a libnccl.so.2 that is not HetCCL
#     through the packaged hetccl-run, which must put HetCCL in its place;
#   - runs the packaged hetccl-perf on 4 CPU ranks in 2 domains.
#
# Usage: scripts/check-packages.sh [BUILD_DIR]   (default: build)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/hetccl-package-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root

mapfile -t debs < <("$repo/scripts/build-packages.sh" "$build")
[[ ${#debs[@]} -eq 3 ]] ||
  { echo "check-packages: expected 3 packages, got: ${debs[*]}" >&2; exit 1; }
for deb in "${debs[@]}"; do
  echo "check-packages: $(dpkg-deb -f "$deb" Package Version Depends Recommends | paste -sd' ')"
  dpkg-deb --contents "$deb" | awk '{print $6}' | grep -v '^\./usr/' &&
    { echo "check-packages: $deb has files outside /usr" >&2; exit 1; }
  dpkg -x "$deb" "$root"
done

# The runtime package's Depends are written by hand (its modules' libraries
# are only recommended): they must be what dpkg-shlibdeps finds for the
# library.
runtime=$(printf '%s\n' "${debs[@]}" | grep '/libhetccl[0-9]_')
library=$(find "$root" -name 'libhetccl.so.[0-9]*.*' | head -1)
mkdir -p "$work/shlibdeps/debian" && touch "$work/shlibdeps/debian/control"
found=$(cd "$work/shlibdeps" && dpkg-shlibdeps -O "$library" |
  sed -n 's/^shlibs:Depends=//p')
declared=$(dpkg-deb -f "$runtime" Depends)
[[ $found == "$declared" ]] ||
  { echo "check-packages: $runtime depends on '$declared'; dpkg-shlibdeps finds '$found' (cmake/packaging.cmake)" >&2; exit 1; }

if ! command -v lintian >/dev/null; then
  echo "check-packages: lintian is not installed (scripts/install-deps.sh)" >&2
  exit 1
fi
echo "check-packages: lintian"
# Errors fail the check; warnings are shown.
lintian --fail-on error --tag-display-limit 0 "${debs[@]}"

echo "check-packages: the packaged hetccl-info finds the packaged modules"
info=$("$root/usr/bin/hetccl-info" 2>&1)
for module in $(find "$root" -name 'libhetccl-*.so' -printf '%f\n' | sort); do
  case $module in
    libhetccl-cuda.so | libhetccl-hip.so) pattern="$root/.*/$module: found" ;;
    libhetccl-ucx.so) pattern="UCX [0-9.]* \\($root/.*/$module\\)" ;;
    *) continue ;;
  esac
  grep -Eq "$pattern" <<<"$info" ||
    { echo "check-packages: hetccl-info does not find $module:" >&2
      grep -E "cuda|hip|ucx" <<<"$info" >&2; exit 1; }
  echo "check-packages: $module found"
done

bash "$repo/scripts/check-install.sh" --installed "$root/usr"

echo "check-packages: a program linked against another libnccl.so.2, through hetccl-run"
mkdir -p "$work/stub"
cat >"$work/stub/nccl.c" <<'SRC'
int ncclGetVersion(int* version) { *version = 1; return 0; }
SRC
cat >"$work/stub/app.c" <<'SRC'
#include <stdio.h>
int ncclGetVersion(int* version);
int main(void) {
  int version = 0;
  if (ncclGetVersion(&version) != 0) return 1;
  printf("NCCL version %d\n", version);
  return 0;
}
SRC
cc -shared -fPIC -Wl,-soname,libnccl.so.2 -o "$work/stub/libnccl.so.2" \
  "$work/stub/nccl.c"
ln -s libnccl.so.2 "$work/stub/libnccl.so"
cc -o "$work/stub/app" "$work/stub/app.c" -L"$work/stub" -lnccl
alone=$(LD_LIBRARY_PATH=$work/stub "$work/stub/app")
through=$(LD_LIBRARY_PATH=$work/stub HETCCL_FORCE_CPU=1 \
  "$root/usr/bin/hetccl-run" "$work/stub/app")
echo "check-packages: alone: $alone; through hetccl-run: $through"
[[ $alone == "NCCL version 1" && $through =~ ^NCCL\ version\ [0-9]{5,}$ ]] ||
  { echo "check-packages: hetccl-run did not put HetCCL in its place" >&2; exit 1; }

echo "check-packages: the packaged hetccl-perf, 4 CPU ranks in 2 domains"
"$root/usr/bin/hetccl-perf" -np 4 -D 0,0,1,1 -x allreduce,allgather -b 1K \
  -e 1M -f 32 -w 0 -n 1 --check 1 --timeout 120 | tail -3
echo "check-packages: passed"
