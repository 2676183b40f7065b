#!/usr/bin/env bash
# Checks the installed package the way a user meets it: installs a build
# tree into a scratch prefix, then builds and runs a small NCCL program
# against it twice, once through find_package(HetCCL) and once through
# pkg-config, and checks that the drop-in libnccl.so.2 is where the
# package says.
#
# Usage: scripts/check-install.sh [BUILD_DIR]   (default: build)
#        scripts/check-install.sh --installed PREFIX
#   (checks a tree installed already, e.g. the packages unpacked)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/hetccl-install-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ ${1:-} == --installed ]]; then
  prefix=$(cd "$2" && pwd)
  echo "check-install: the tree installed in $prefix"
else
  build=$(cd "${1:-$repo/build}" && pwd)
  prefix=$work/prefix
  echo "check-install: installing $build into $prefix"
  cmake --install "$build" --prefix "$prefix" >"$work/install.log"
fi

mkdir -p "$work/consumer"
cat >"$work/consumer/main.c" <<'SRC'
#include <nccl.h>
#include <hetccl.h>
#include <stdio.h>

int main(void) {
  int version = 0;
  ncclResult_t result = ncclGetVersion(&version);
  if (result != ncclSuccess) {
    fprintf(stderr, "ncclGetVersion: %s\n", ncclGetErrorString(result));
    return 1;
  }
  printf("ncclGetVersion: %d (header: %d)\n", version, NCCL_VERSION_CODE);
  return version >= NCCL_VERSION(2, 0, 0) ? 0 : 1;
}
SRC
cat >"$work/consumer/CMakeLists.txt" <<'SRC'
cmake_minimum_required(VERSION 3.20)
project(HetCCLConsumer C)
find_package(HetCCL 0.1 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE HetCCL::hetccl)
add_executable(consumer_dropin main.c)
target_link_libraries(consumer_dropin PRIVATE HetCCL::nccl)
if(NOT EXISTS "${HETCCL_DROPIN_LIBRARY_DIR}/libnccl.so.2")
  message(FATAL_ERROR "no libnccl.so.2 in ${HETCCL_DROPIN_LIBRARY_DIR}")
endif()
SRC

echo "check-install: find_package(HetCCL) consumer"
cmake -S "$work/consumer" -B "$work/consumer-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" ||
  { cat "$work/consumer.log"; exit 1; }
cmake --build "$work/consumer-build" >>"$work/consumer.log" ||
  { cat "$work/consumer.log"; exit 1; }
"$work/consumer-build/consumer"
"$work/consumer-build/consumer_dropin"
# Read whole before grep: `ldd | grep -q` fails under pipefail whenever grep
# stops reading before ldd has written everything (SIGPIPE).
loaded=$(ldd "$work/consumer-build/consumer_dropin")
grep -q "$prefix/.*/hetccl/libnccl.so.2" <<<"$loaded" ||
  { echo "consumer_dropin does not load the installed libnccl.so.2:" >&2
    echo "$loaded" >&2; exit 1; }

echo "check-install: pkg-config consumer"
pc_file=$(find "$prefix" -name hetccl.pc)
[[ -n $pc_file ]] || { echo "no hetccl.pc installed" >&2; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc_file")
libdir=$(pkg-config --variable=libdir hetccl)
# shellcheck disable=SC2046  # pkg-config output is meant to be split
cc -o "$work/consumer-pc" "$work/consumer/main.c" \
  $(pkg-config --cflags --libs hetccl) -Wl,-rpath,"$libdir"
"$work/consumer-pc"

echo "check-install: passed"
