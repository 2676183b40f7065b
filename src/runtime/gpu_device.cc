#include "runtime/gpu_device.h"

#include "runtime/cuda_probe.h"
#include "runtime/hip_probe.h"
#include "runtime/host/emulated_device_module.h"
#include "runtime/runtime_params.h"

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
  if (readFlag(kEmulatedGpu)) {
    int device = 0;
    emulatedDeviceModule().check(
        emulatedDeviceModule().api().getDevice(&device),
        "asking for the current device");
    return GpuDevice{RuntimeKind::Cuda, device, /*emulated=*/true};
  }
  for (const RuntimeProbe& probe : kProbes)
    if (auto device = probe.currentDevice())
      return GpuDevice{probe.runtime, *device};
  return std::nullopt;
}

int deviceCountOf(const GpuDevice& gpu) {
  if (gpu.emulated) {
    int count = 0;
    return emulatedDeviceModule().api().deviceCount(&count) == 0 ? count : 0;
  }
  std::optional<int> count =
      gpu.runtime == RuntimeKind::Hip ? hipDeviceCount() : cudaDeviceCount();
  return count.value_or(0);
}

const DeviceModule& deviceModuleOf(const GpuDevice& gpu) {
  return gpu.emulated ? emulatedDeviceModule() : deviceModule(gpu.runtime);
}

}  // namespace hetccl
