#!/usr/bin/env bash
# Installs the Debian 12 packages that building, testing and benchmarking
# HetCCL need. Safe to run again: apt-get skips what is already there, and
# nothing is fetched when every package is present already.
#
# Usage: scripts/install-deps.sh [--force]
#   --force   run apt-get even if every package looks installed.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make pkg-config
  libgtest-dev libgmock-dev
  libopenmpi-dev openmpi-bin
  libgloo-dev
  iproute2 procps python3
  # bench/charts.py: the charts of the benchmark records and the README
  # (the ctest charts_from_a_record needs it).
  python3-matplotlib
  # The UCX transport module (libhetccl-ucx.so) and, for the benchmark that
  # compares it with UCX's own, ucx_perftest.
  libucx-dev ucx-utils
  # The HIP runtime module (libhetccl-hip.so) is built in CI with Debian's
  # hipcc (ROCm 5.2: clang-15 and the ROCm device libraries, about 100 MiB
  # to fetch, 630 MiB installed); libamdhip64 also lets hetccl-info and the
  # HIP probe tests look for AMD devices. nvcc for the CUDA module comes
  # from the CUDA toolkit in /usr/local/cuda, not from Debian.
  hipcc libamdhip64-dev
  # aws-ofi-nccl, the real NCCL net plugin the net transport's tests run
  # over (scripts/build-aws-ofi-nccl.sh builds it from ../shared/third_party
  # against Debian's libfabric 1.17 and hwloc).
  libfabric-dev libhwloc-dev autoconf automake libtool
  # The Debian packages (scripts/build-packages.sh, CPack): dpkg-shlibdeps
  # for their dependencies, lintian for the check of them.
  dpkg-dev lintian
)

missing_packages() {
  local pkg
  for pkg in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
      grep -q "install ok installed"; then
      echo "$pkg"
    fi
  done
}

force=0
if [[ "${1:-}" == "--force" ]]; then force=1; fi

mapfile -t missing < <(missing_packages)
if [[ $force -eq 0 && ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    SUDO=(sudo)
  else
    echo "install-deps: missing packages (${missing[*]}) and not root" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]:-${PACKAGES[*]}}"
# Another apt run (unattended upgrades, a parallel job) may hold the lock:
# wait for it rather than failing at once.
APT_OPTS=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
"${SUDO[@]}" apt-get "${APT_OPTS[@]}" update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${PACKAGES[@]}"
