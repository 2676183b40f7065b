// Compiled with -fmad=false: see device_kernels.h for why.
#include "runtime/cuda/cuda_reduce.h"

#include <cuda_runtime.h>

#include "runtime/device/device_kernels.h"

namespace hetccl {
namespace cuda {
namespace {

// How device_kernels.h reaches the CUDA runtime.
class Launcher {
 public:
  explicit Launcher(cudaStream_t stream) : stream_(stream) {}

  template <typename Args>
  int launch(void (*kernel)(Args), const Args& args,
             device::LaunchShape shape) {
    void* params[] = {const_cast<Args*>(&args)};
    return cudaLaunchKernel(reinterpret_cast<const void*>(kernel),
                            dim3(shape.blocks), dim3(shape.threads), params, 0,
                            stream_);
  }

  int copy(void* dst, const void* src, size_t bytes) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_);
  }

  int invalidValue() const { return cudaErrorInvalidValue; }

 private:
  cudaStream_t stream_;
};

// Loads each kernel instead of launching it: asking for a function's
// attributes makes CUDA load it.
class KernelLoader {
 public:
  template <typename Args>
  int launch(void (*kernel)(Args), const Args&, device::LaunchShape) {
    cudaFuncAttributes attributes;
    return cudaFuncGetAttributes(&attributes,
                                 reinterpret_cast<const void*>(kernel));
  }
  int copy(void*, const void*, size_t) { return 0; }
  int invalidValue() const { return cudaErrorInvalidValue; }
};

}  // namespace

int loadKernels() {
  KernelLoader loader;
  return device::visitEveryKernel(loader);
}

int reduceAsync(const hetcclDeviceReduction& reduction, cudaStream_t stream) {
  Launcher launcher(stream);
  return device::enqueueReduction(reduction, launcher);
}

}  // namespace cuda
}  // namespace hetccl
