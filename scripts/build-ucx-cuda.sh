#!/usr/bin/env bash
# Builds Debian's UCX (the same 1.13.1 that libucx-dev installs) with its
# CUDA transports (cuda_copy, cuda_ipc) into a folder of its own, for
# trying HetCCL's GPU buffers on ucx links (HETCCL_UCX_GPU, docs/ucx.md)
# where no UCX with CUDA is installed. Needs the CUDA toolkit, autotools
# and Debian's source repository; the GPU machine's tests take the result
# as UCX_CUDA (tests/gpu/run.sh, step ucx-gpu).
#
#   scripts/build-ucx-cuda.sh [PREFIX]     # default build-ucx-cuda
#
# Debian's CUDA toolkit packages lack NVML's header, which UCX's configure
# requires (only cuda_ipc uses it, to count NVLinks): a header of the few
# NVML declarations UCX uses and a library of the same names to link
# against stand in for it; the driver's libnvidia-ml.so.1 is used at run
# time.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(realpath -m "${1:-$repo/build-ucx-cuda}")
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d /tmp/ucx-cuda.XXXXXX)
trap 'rm -rf "$work"' EXIT

[[ -x $cuda/bin/nvcc ]] || { echo "no CUDA toolkit at $cuda (set CUDA_HOME)"; exit 1; }

# UCX's source from Debian's source repository.
sources=/etc/apt/sources.list.d/hetccl-ucx-source.sources
cat >"$sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt-get update -qq
apt-get install -y -qq autoconf automake libtool >/dev/null
(cd "$work" && apt-get source --download-only ucx >/dev/null)
rm -f "$sources"
apt-get update -qq
tar -xf "$work"/ucx_*.orig.tar.* -C "$work"
src=$(echo "$work"/ucx-*/)
# Debian's tarball keeps upstream's packaging files under debian.upstream,
# which configure.ac expects as debian/.
[[ -d $src/debian ]] || cp -r "$src/debian.upstream" "$src/debian"

nvml=$work/nvml
mkdir -p "$nvml"
cat >"$nvml/nvml.h" <<'EOF'
/* The NVML declarations UCX 1.13 uses; the driver's library is used at
 * run time. */
#ifndef HETCCL_NVML_STAND_IN_H
#define HETCCL_NVML_STAND_IN_H
#ifdef __cplusplus
extern "C" {
#endif
typedef enum { NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1 } nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1
} nvmlValueType_t;
typedef union {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
} nvmlValue_t;
typedef struct {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                        nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                      nvmlFieldValue_t* values);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device,
                                              unsigned int link,
                                              nvmlPciInfo_t* pci);
#ifdef __cplusplus
}
#endif
#endif
EOF
# Link-time only: the same names, so that the loader looks for them in
# libnvidia-ml.so.1 at run time.
cat >"$nvml/link_names.c" <<'EOF'
#include "nvml.h"
nvmlReturn_t nvmlInit(void) { return NVML_ERROR_UNINITIALIZED; }
nvmlReturn_t nvmlInit_v2(void) { return NVML_ERROR_UNINITIALIZED; }
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }
const char* nvmlErrorString(nvmlReturn_t r) { return r ? "error" : "ok"; }
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t* d) {
  (void)i, (void)d;
  return NVML_ERROR_UNINITIALIZED;
}
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n,
                                      nvmlFieldValue_t* v) {
  (void)d, (void)n, (void)v;
  return NVML_ERROR_UNINITIALIZED;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t d, unsigned int l,
                                              nvmlPciInfo_t* p) {
  (void)d, (void)l, (void)p;
  return NVML_ERROR_UNINITIALIZED;
}
EOF
gcc -shared -fPIC -I"$nvml" -Wl,-soname,libnvidia-ml.so.1 \
  -o "$nvml/libnvidia-ml.so" "$nvml/link_names.c"

cd "$src"
./autogen.sh >"$work/autogen.log" 2>&1
./configure --prefix="$prefix" --with-cuda="$cuda" --without-rocm \
  --without-verbs --without-rdmacm --without-knem --without-xpmem \
  --without-gdrcopy --without-java --without-go --disable-doxygen-doc \
  --enable-optimizations --disable-logging --disable-debug \
  --disable-assertions --disable-params-check \
  CPPFLAGS="-I$nvml" LDFLAGS="-L$nvml" >"$work/configure.log" 2>&1 ||
  { tail -20 "$work/configure.log"; exit 1; }
# The libraries and the two tools only: UCX 1.13's test programs do not
# build against CUDA 13's driver API.
for dir in src/ucm src/ucs src/uct src/ucp src/tools/info src/tools/perf; do
  make -C "$dir" -j "$(nproc)" install >>"$work/make.log" 2>&1 ||
    { tail -20 "$work/make.log"; exit 1; }
done
find "$prefix" \( -name '*.a' -o -name '*.la' \) -delete
rm -rf "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake"
strip --strip-unneeded "$prefix"/lib/*.so.* "$prefix"/lib/ucx/*.so.* \
  "$prefix"/bin/* 2>/dev/null || true
echo "UCX with CUDA in $prefix ($(du -sh "$prefix" | cut -f1)):"
LD_LIBRARY_PATH=$prefix/lib "$prefix/bin/ucx_info" -v | sed -n 1p
