#include "runtime/gpu_runtimes.h"

#include <string>

#include "util/error.h"

namespace hetccl {

// PyTorch's ROCm wheels keep the versioned soname on a file renamed
// libamdhip64.so, hence the unversioned names last. HIP graphs have not
// yet run a launch through the staging proxy.
const std::vector<GpuRuntime>& gpuRuntimes() {
  static const std::vector<GpuRuntime> runtimes = {
      {RuntimeKind::Cuda,
       "cuda",
       "CUDA",
       {"libcudart.so.13", "libcudart.so.12", "libcudart.so"},
       &kCudaModule,
       "libhetccl-cuda.so",
       kCudaMemory,
       true},
      {RuntimeKind::Hip,
       "hip",
       "HIP",
       {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
        "libamdhip64.so"},
       &kHipModule,
       "libhetccl-hip.so",
       kHipMemory,
       false},
  };
  return runtimes;
}

const char* runtimeKindName(RuntimeKind kind) {
  if (kind == RuntimeKind::Host) return "host";
  for (const GpuRuntime& runtime : gpuRuntimes())
    if (runtime.kind == kind) return runtime.name;
  return "unknown";
}

const GpuRuntime& gpuRuntime(RuntimeKind kind) {
  for (const GpuRuntime& runtime : gpuRuntimes())
    if (runtime.kind == kind) return runtime;
  fail(ncclInternalError, "%s ranks have no GPU runtime",
       runtimeKindName(kind));
}

const GpuRuntime* findGpuRuntime(const std::string& name) {
  for (const GpuRuntime& runtime : gpuRuntimes())
    if (name == runtime.name) return &runtime;
  return nullptr;
}

std::optional<int> currentDevice(const GpuRuntime& runtime) {
  return loadedRuntimeCurrentDevice(runtime.sonames, runtime.name,
                                    runtime.label);
}

std::optional<int> deviceCount(const GpuRuntime& runtime) {
  return loadedRuntimeDeviceCount(runtime.sonames, runtime.name);
}

void setCurrentDevice(const GpuRuntime& runtime, int device) {
  using SetDevice = int (*)(int);
  const std::string function = std::string(runtime.name) + "SetDevice";
  auto setDevice = reinterpret_cast<SetDevice>(
      loadedRuntimeFunction(runtime.sonames, function.c_str()));
  if (setDevice == nullptr)
    fail(ncclUnhandledCudaError,
         "cannot make %s device %d current: no %s runtime is loaded",
         runtime.label, device, runtime.label);
  const int error = setDevice(device);
  if (error != 0)
    fail(ncclUnhandledCudaError,
         "cannot make %s device %d current (%s error %d)", runtime.label,
         device, function.c_str(), error);
}

}  // namespace hetccl
