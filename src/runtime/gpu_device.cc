#include "runtime/gpu_device.h"

#include "runtime/cuda_probe.h"
#include "runtime/hip_probe.h"

namespace hetccl {

std::optional<GpuDevice> currentGpuDevice() {
  if (auto cuda = currentCudaDevice())
    return GpuDevice{RuntimeKind::Cuda, *cuda};
  if (auto hip = currentHipDevice()) return GpuDevice{RuntimeKind::Hip, *hip};
  return std::nullopt;
}

}  // namespace hetccl
