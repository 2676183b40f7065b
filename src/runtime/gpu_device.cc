#include "runtime/gpu_device.h"

#include "runtime/cuda_probe.h"
#include "runtime/hip_probe.h"

namespace hetccl {

namespace {

// Each GPU runtime and how to ask the program's copy of it for the current
// device, in the order they are asked.
struct RuntimeProbe {
  RuntimeKind runtime;
  std::optional<int> (*currentDevice)();
};
constexpr RuntimeProbe kProbes[] = {
    {RuntimeKind::Cuda, currentCudaDevice},
    {RuntimeKind::Hip, currentHipDevice},
};

}  // namespace

std::optional<GpuDevice> currentGpuDevice() {
  for (const RuntimeProbe& probe : kProbes)
    if (auto device = probe.currentDevice())
      return GpuDevice{probe.runtime, *device};
  return std::nullopt;
}

}  // namespace hetccl
