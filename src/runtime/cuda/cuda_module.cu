// libhetccl-cuda.so: the device-module table (runtime/device/device_module.h)
// over the CUDA runtime; runtime_table.h has the entries CUDA and HIP spell
// alike and fills the table, CudaRuntime below what CUDA does its own way.
// The runtime is linked statically and the driver is reached only through it,
// so the module loads on machines without an NVIDIA driver; its functions then
// return cudaErrorInsufficientDriver or cudaErrorNoDevice. Only
// hetcclDeviceModule leaves the library (a version script hides the rest, the
// static runtime included, so that its calls never bind to another copy of
// cudart that the program loaded).
#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_dma_buf.h"
#include "runtime/cuda/cuda_reduce.h"
#include "runtime/cuda/cuda_stream_memops.h"

#define HETCCL_RT(name) cuda##name
#define HETCCL_RT_NAMESPACE cuda
#include "runtime/device/runtime_table.h"

namespace hetccl {
namespace cuda {
namespace {

// What CUDA does its own way; runtime_table.h fills the table with it.
struct CudaRuntime {
  static constexpr const char* kName = "cuda";

  static int memoryKind(const void* pointer, int* kind) {
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

  // Pinned memory is not stream work and outlives every graph, so it may
  // be taken while this thread captures (a staging slot grows in a
  // captured launch): the capture mode is relaxed around it, as NCCL does.
  static int hostAlloc(void** pointer, size_t bytes) {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    const cudaError_t swapped = cudaThreadExchangeStreamCaptureMode(&mode);
    if (swapped != cudaSuccess) return swapped;
    const cudaError_t status = cudaHostAlloc(
        pointer, bytes, cudaHostAllocPortable | cudaHostAllocMapped);
    const cudaError_t restored = cudaThreadExchangeStreamCaptureMode(&mode);
    if (status != cudaSuccess) return status;
    if (restored != cudaSuccess) cudaFreeHost(*pointer);  // reported instead
    return restored;
  }

  static int hostFree(void* pointer) { return cudaFreeHost(pointer); }

  // The stream memory operations, the kernels and the DMA-BUF export live
  // in their own sources (cuda_stream_memops.h, cuda_reduce.h,
  // cuda_dma_buf.h), in namespace cuda.
  static int writeValue64(void* stream, uint64_t* address, uint64_t value) {
    return cuda::writeValue64(asStream(stream), address, value);
  }

  static int waitValue64(void* stream, const uint64_t* address,
                         uint64_t value) {
    return cuda::waitValue64(asStream(stream), address, value);
  }

  static int waitBits64(void* stream, const uint64_t* address, uint64_t bits) {
    return cuda::waitBits64(asStream(stream), address, bits);
  }

  static int reduceAsync(const hetcclDeviceReduction* reduction, void* stream) {
    if (reduction == nullptr) return cudaErrorInvalidValue;
    return cuda::reduceAsync(*reduction, asStream(stream));
  }

  static int lowLatencyCollective(
      const hetcclDeviceLowLatencyCollective* collective, void* stream) {
    if (collective == nullptr) return cudaErrorInvalidValue;
    return cuda::lowLatencyCollective(*collective, asStream(stream));
  }

  static int stagedCopy(const hetcclDeviceStagedCopy* copy, void* stream) {
    if (copy == nullptr) return cudaErrorInvalidValue;
    return cuda::stagedCopy(*copy, asStream(stream));
  }

  static int loadKernels() { return cuda::loadKernels(); }

  static int dmaBufSupported(int* supported) {
    return cuda::dmaBufSupported(supported);
  }

  static int exportDmaBuf(const void* pointer, int* fd, uint64_t* offset) {
    return cuda::exportDmaBuf(pointer, fd, offset);
  }
};

}  // namespace
}  // namespace cuda
}  // namespace hetccl

extern "C" __attribute__((visibility("default"))) const hetcclDeviceModuleTable*
hetcclDeviceModule(void) {
  return hetccl::cuda::moduleTable<hetccl::cuda::CudaRuntime>();
}
