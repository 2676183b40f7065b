// libhetccl-cuda.so: the device-module table (runtime/device/device_module.h)
// over the CUDA runtime; runtime_table.h has the entries CUDA and HIP spell
// alike. The runtime is linked statically and the driver is
// reached only through it, so the module loads on machines without an
// NVIDIA driver; its functions then return cudaErrorInsufficientDriver or
// cudaErrorNoDevice. Only hetcclDeviceModule leaves the library (a version
// script hides the rest, the static runtime included, so that its calls
// never bind to another copy of cudart that the program loaded).
#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_reduce.h"
#include "runtime/cuda/cuda_stream_memops.h"

#define HETCCL_RT(name) cuda##name
#define HETCCL_RT_NAMESPACE cuda
#include "runtime/device/runtime_table.h"

namespace hetccl {
namespace cuda {
namespace {

int memoryKind(const void* pointer, int* kind) {
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, pointer);
  if (error == cudaErrorInvalidValue) {
    // Memory the runtime does not know (older runtimes say so with an
    // error, which must not linger for the next cudaGetLastError).
    cudaGetLastError();
    *kind = hetcclMemoryUnknown;
    return cudaSuccess;
  }
  if (error != cudaSuccess) return error;
  switch (attributes.type) {
    case cudaMemoryTypeHost:
      *kind = hetcclMemoryHost;
      break;
    case cudaMemoryTypeDevice:
      *kind = hetcclMemoryDevice;
      break;
    case cudaMemoryTypeManaged:
      *kind = hetcclMemoryManaged;
      break;
    default:
      *kind = hetcclMemoryUnknown;
      break;
  }
  return cudaSuccess;
}

int hostAlloc(void** pointer, size_t bytes) {
  return cudaHostAlloc(pointer, bytes,
                       cudaHostAllocPortable | cudaHostAllocMapped);
}

int hostFree(void* pointer) { return cudaFreeHost(pointer); }

int streamWriteValue64(void* stream, uint64_t* address, uint64_t value) {
  return writeValue64(asStream(stream), address, value);
}

int streamWaitValue64(void* stream, const uint64_t* address, uint64_t value) {
  return waitValue64(asStream(stream), address, value);
}

int streamWaitBits64(void* stream, const uint64_t* address, uint64_t bits) {
  return waitBits64(asStream(stream), address, bits);
}

int reduce(const hetcclDeviceReduction* reduction, void* stream) {
  if (reduction == nullptr) return cudaErrorInvalidValue;
  return reduceAsync(*reduction, asStream(stream));
}

int lowLatency(const hetcclDeviceLowLatencyCollective* collective,
               void* stream) {
  if (collective == nullptr) return cudaErrorInvalidValue;
  return lowLatencyCollective(*collective, asStream(stream));
}

hetcclDeviceModuleTable makeTable() {
  hetcclDeviceModuleTable table{};
  fillCommonEntries(table);
  table.runtimeName = "cuda";
  table.memoryKind = memoryKind;
  table.hostAlloc = hostAlloc;
  table.hostFree = hostFree;
  table.writeValue64 = streamWriteValue64;
  table.waitValue64 = streamWaitValue64;
  table.waitBits64 = streamWaitBits64;
  table.reduceAsync = reduce;
  table.lowLatencyCollective = lowLatency;
  table.loadKernels = loadKernels;
  return table;
}

}  // namespace
}  // namespace cuda
}  // namespace hetccl

extern "C" __attribute__((visibility("default"))) const hetcclDeviceModuleTable*
hetcclDeviceModule(void) {
  static const hetcclDeviceModuleTable table = hetccl::cuda::makeTable();
  return &table;
}
