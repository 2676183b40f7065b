#!/usr/bin/env bash
# Builds aws-ofi-nccl (a real NCCL network plugin over libfabric) from the
# snapshot in ../shared/third_party for the net transport's tests and
# benchmarks, out of tree, into a cache folder that every build of HetCCL
# (release and ASan) shares: a second call for the same tarball returns at
# once. Prints the plugin's path (alone, on stdout); progress and reasons go
# to stderr.
#
#   scripts/build-aws-ofi-nccl.sh [--retry] [CACHE_DIR]
#
#   CACHE_DIR  default build-third-party/aws-ofi-nccl in the repository.
#   --retry    build again even if the last build of this tarball failed
#              (without it, a failed build is reported, not repeated).
#
# Environment: HETCCL_THIRD_PARTY (default ../shared/third_party next to
# the repository), HETCCL_AWS_OFI_NCCL_TARBALL (a path; default the
# aws-ofi-nccl-*.tar.gz there), CUDA_HOME (default /usr/local/cuda), JOBS
# (make's jobs, default 2).
#
# Exit status: 0 built (or cached); 77 cannot be built on this machine (no
# tarball, or a build dependency missing: the tests skip, saying why); 1
# the build failed (its log is named).
#
# Build facts (../shared/third_party/README.md): a snapshot has no git tags,
# so .release_version is written before ./autogen.sh; configure takes
# --with-cuda --enable-cudart-dynamic --disable-tests and must not be given
# --with-libfabric=/usr or --with-hwloc=/usr. Debian 12 packages: autoconf
# automake libtool libfabric-dev libhwloc-dev (scripts/install-deps.sh).
set -euo pipefail

readonly kSkip=77
repo=$(cd "$(dirname "$0")/.." && pwd)

retry=0
if [[ ${1:-} == --retry ]]; then
  retry=1
  shift
fi
cache=$(realpath -m "${1:-$repo/build-third-party/aws-ofi-nccl}")
third_party=${HETCCL_THIRD_PARTY:-$repo/../shared/third_party}
cuda=${CUDA_HOME:-/usr/local/cuda}
jobs=${JOBS:-2}

say() { echo "build-aws-ofi-nccl: $*" >&2; }
skip() {
  say "cannot build aws-ofi-nccl here: $*"
  exit "$kSkip"
}

tarball=${HETCCL_AWS_OFI_NCCL_TARBALL:-}
if [[ -z $tarball ]]; then
  shopt -s nullglob
  candidates=("$third_party"/aws-ofi-nccl-*.tar.gz)
  shopt -u nullglob
  [[ ${#candidates[@]} -gt 0 ]] ||
    skip "no aws-ofi-nccl-*.tar.gz in $third_party (set HETCCL_THIRD_PARTY or HETCCL_AWS_OFI_NCCL_TARBALL)"
  tarball=${candidates[-1]}
fi
[[ -f $tarball ]] || skip "no tarball at $tarball"

# What the build needs, each with the Debian package that has it.
missing=()
for tool in autoreconf:autoconf automake:automake libtoolize:libtool \
  make:make g++:g++ flock:util-linux sha256sum:coreutils; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
[[ -f /usr/include/rdma/fabric.h ]] || missing+=(libfabric-dev)
[[ -f /usr/include/hwloc.h ]] || missing+=(libhwloc-dev)
[[ ${#missing[@]} -eq 0 ]] ||
  skip "missing ${missing[*]} (scripts/install-deps.sh installs them)"
[[ -f $cuda/include/cuda.h ]] ||
  skip "no CUDA toolkit headers at $cuda/include (set CUDA_HOME); aws-ofi-nccl needs them even for host memory"

checksum=$(sha256sum "$tarball" | cut -c1-16)
plugin=$cache/prefix/lib/libnccl-net-ofi.so
built=$cache/built-$checksum
failed=$cache/failed-$checksum
log=$cache/build-$checksum.log

mkdir -p "$cache"
# One build at a time per cache: the tests of two builds of HetCCL may ask
# at once; the second waits and finds the first's result.
exec 9>"$cache/.lock"
flock 9

if [[ -f $built && -f $plugin ]]; then
  say "cached: $plugin (tarball $(basename "$tarball"), sha256 $checksum...)"
  echo "$plugin"
  exit 0
fi
if [[ -f $failed && $retry -eq 0 ]]; then
  say "the last build of $(basename "$tarball") failed (log: $log); run with --retry, or remove $failed, to try again"
  exit 1
fi

rm -rf "$cache/src" "$cache/build" "$cache/prefix" "$cache"/built-* \
  "$cache"/failed-*
mkdir -p "$cache/src" "$cache/build"
say "building $(basename "$tarball") into $cache (log: $log; a few minutes)"
start=$SECONDS
if ! (
  set -e
  tar -xzf "$tarball" -C "$cache/src" --strip-components=1
  cd "$cache/src"
  # The snapshot's version, for configure (no git tags to read it from).
  version=$(basename "$tarball" .tar.gz)
  echo "1.21.1-git${version##*-}" >.release_version
  ./autogen.sh
  cd "$cache/build"
  "$cache/src/configure" --prefix="$cache/prefix" --with-cuda="$cuda" \
    --enable-cudart-dynamic --disable-tests
  make -j"$jobs"
  make install
) >"$log" 2>&1; then
  touch "$failed"
  say "the build failed after $((SECONDS - start))s; the end of $log:"
  tail -n 25 "$log" >&2
  exit 1
fi
[[ -f $plugin ]] || {
  touch "$failed"
  say "the build finished but left no $plugin (log: $log)"
  exit 1
}
touch "$built"
say "built in $((SECONDS - start))s: $plugin"
echo "$plugin"
