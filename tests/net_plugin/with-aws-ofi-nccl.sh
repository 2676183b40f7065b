#!/usr/bin/env bash
# Runs a command with aws-ofi-nccl as the net transport's plugin, as the
# tests over it do (tests/CMakeLists.txt): builds the plugin first, or finds
# it built, with scripts/build-aws-ofi-nccl.sh into CACHE_DIR, then runs
# COMMAND with HETCCL_NET_PLUGIN naming it, libfabric's tcp provider
# (FI_PROVIDER=tcp, over loopback here) and the stand-in CUDA runtime of
# CUDART_DIR first on LD_LIBRARY_PATH (tests/net_plugin/standin_cudart.cc),
# and, for the ASan build, LeakSanitizer's suppressions of what the plugin
# and libfabric keep for good (aws-ofi-nccl.lsan.supp).
#
#   with-aws-ofi-nccl.sh CACHE_DIR CUDART_DIR COMMAND [ARGS...]
#
# Exits 77 (the tests' SKIP_RETURN_CODE), saying why, where the plugin
# cannot be built here or its build failed (the test aws_ofi_nccl_build
# reports that failure); otherwise COMMAND's status.
set -uo pipefail

readonly kSkip=77
[[ $# -ge 3 ]] || {
  echo "usage: $0 CACHE_DIR CUDART_DIR COMMAND [ARGS...]" >&2
  exit 2
}
cache=$1
cudart=$2
shift 2
repo=$(cd "$(dirname "$0")/../.." && pwd)

plugin=$("$repo/scripts/build-aws-ofi-nccl.sh" "$cache")
status=$?
if [[ $status -ne 0 ]]; then
  if [[ $status -eq $kSkip ]]; then
    echo "SKIPPED: aws-ofi-nccl cannot be built on this machine (above)"
  else
    echo "SKIPPED: aws-ofi-nccl did not build (above; the test aws_ofi_nccl_build fails for it)"
  fi
  exit "$kSkip"
fi
[[ -f $cudart/libcudart.so ]] || {
  echo "no stand-in CUDA runtime at $cudart/libcudart.so (build hetccl_standin_cudart)" >&2
  exit 1
}

export HETCCL_NET_PLUGIN=$plugin
export FI_PROVIDER=tcp
export LD_LIBRARY_PATH=$cudart${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# In a sanitised build: what the plugin and libfabric keep for good is not
# HetCCL's leak (aws-ofi-nccl.lsan.supp).
export LSAN_OPTIONS="suppressions=$(dirname "$0")/aws-ofi-nccl.lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
echo "with-aws-ofi-nccl: HETCCL_NET_PLUGIN=$plugin FI_PROVIDER=tcp LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
exec "$@"
