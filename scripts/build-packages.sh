#!/usr/bin/env bash
# Builds HetCCL's Debian packages (libhetccl0, libhetccl-dev, hetccl-tools;
# cmake/packaging.cmake): configures BUILD_DIR for /usr if it is new (a
# Release build with the CUDA, HIP and UCX modules where their toolkits are,
# no tests or benchmarks), builds it, and runs CPack. Prints the paths of
# the .deb files, which land in BUILD_DIR/packages.
#
# Usage: scripts/build-packages.sh [BUILD_DIR]   (default: build-packages)
# Environment: JOBS (default: the number of cores).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build-packages}
jobs=${JOBS:-$(nproc)}
mkdir -p "$build"
build=$(cd "$build" && pwd)

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX=/usr -DHETCCL_BUILD_TESTS=OFF \
    -DHETCCL_BUILD_BENCH=OFF >&2
fi
cmake --build "$build" -j "$jobs" >&2
mkdir -p "$build/packages"
(cd "$build" && cpack -G DEB -B "$build/packages" >&2)
find "$build/packages" -maxdepth 1 -name '*.deb' | sort
