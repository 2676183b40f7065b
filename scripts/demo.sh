#!/usr/bin/env bash
# The main demo: a heterogeneous all-reduce sweep through HetCCL on the
# hardware found. Without GPUs (the default) that is four CPU ranks forced
# into two domains of two (1 KB to 64 MB, float32 sum, results checked),
# with nccl-tests' columns.
# Installs what it needs on a fresh Debian 12 machine, builds (Release) and
# runs build/tools/hetccl-perf. Extra arguments go to hetccl-perf, e.g.
#   scripts/demo.sh -n 50
# Environment: BUILD_DIR (default build), JOBS (default 2).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
build=${BUILD_DIR:-build}
jobs=${JOBS:-2}

section() {
  printf '\n==================== %s ====================\n' "$*"
}

section "dependencies"
bash scripts/install-deps.sh

section "build ($build, Release)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
tools=(hetccl-perf)
# The list read whole: under pipefail, `ninja ... | grep -q` fails whenever
# grep stops reading before ninja has written everything (SIGPIPE).
targets=$(ninja -C "$build" -t targets all 2>/dev/null)
if grep -q '^hetccl-info:' <<<"$targets"; then
  tools+=(hetccl-info)
fi
cmake --build "$build" -j "$jobs" --target "${tools[@]}"

if [[ -x $build/tools/hetccl-info ]]; then
  section "hetccl-info"
  "$build/tools/hetccl-info" || true  # informative only
fi

section "hetccl-perf: all-reduce on 4 CPU ranks in 2 domains"
command=("$build/tools/hetccl-perf" -np 4 -D split:2 -x allreduce -b 1K
  -e 64M -f 4 -d float32 --check 1 "$@")
echo "${command[*]}"
"${command[@]}"
