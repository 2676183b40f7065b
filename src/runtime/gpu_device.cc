#include "runtime/gpu_device.h"

#include "runtime/gpu_runtimes.h"
#include "runtime/host/emulated_device_module.h"
#include "runtime/runtime_params.h"

namespace hetccl {

std::optional<GpuDevice> currentGpuDevice() {
  if (readFlag(kEmulatedGpu)) {
    int device = 0;
    emulatedDeviceModule().check(
        emulatedDeviceModule().api().getDevice(&device),
        "asking for the current device");
    return GpuDevice{RuntimeKind::Cuda, device, /*emulated=*/true};
  }
  for (const GpuRuntime& runtime : gpuRuntimes())
    if (auto device = currentDevice(runtime))
      return GpuDevice{runtime.kind, *device};
  return std::nullopt;
}

int deviceCountOf(const GpuDevice& gpu) {
  if (gpu.emulated) {
    int count = 0;
    return emulatedDeviceModule().api().deviceCount(&count) == 0 ? count : 0;
  }
  return deviceCount(gpuRuntime(gpu.runtime)).value_or(0);
}

const DeviceModule& deviceModuleOf(const GpuDevice& gpu) {
  return gpu.emulated ? emulatedDeviceModule() : deviceModule(gpu.runtime);
}

}  // namespace hetccl
