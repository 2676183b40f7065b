// Compiled with -fmad=false: see device_kernels.h for why.
#include "runtime/cuda/cuda_reduce.h"

#include <cuda_runtime.h>

#define HETCCL_RT(name) cuda##name
#define HETCCL_RT_NAMESPACE cuda
#include "runtime/device/kernel_launcher.h"

namespace hetccl {
namespace cuda {

int loadKernels() {
  KernelLoader loader;
  return device::visitEveryKernel(loader);
}

int reduceAsync(const hetcclDeviceReduction& reduction, cudaStream_t stream) {
  Launcher launcher(stream);
  return device::enqueueReduction(reduction, launcher);
}

int lowLatencyCollective(const hetcclDeviceLowLatencyCollective& collective,
                         cudaStream_t stream) {
  Launcher launcher(stream);
  return device::enqueueLowLatencyCollective(collective, launcher);
}

int stagedCopy(const hetcclDeviceStagedCopy& copy, cudaStream_t stream) {
  Launcher launcher(stream);
  return device::enqueueStagedCopy(copy, launcher);
}

}  // namespace cuda
}  // namespace hetccl
