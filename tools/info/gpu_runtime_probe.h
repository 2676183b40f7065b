// What hetccl-info asks of the GPU runtimes: whether NVIDIA's driver and
// AMD's HIP runtime exist on this machine, their versions and how many
// devices they see. Unlike the library's probes (runtime/gpu_runtimes.h),
// which only look at what the program loaded, the tool loads the runtimes
// itself: it runs on its own, to report.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace hetccl_info {

struct GpuRuntimeProbe {
  std::string library;  // the library that answered; empty when none loaded
  std::string failure;  // why none loaded (the loader's last message)
  int version = 0;      // the runtime's own version code
  int deviceCount = 0;
  int countError = 0;  // the runtime's error from counting devices
  std::string countErrorName;
};

namespace detail {

using GetInt = int (*)(int*);

// Opens the first of `sonames` the loader finds. The handle is never
// closed: a GPU runtime starts threads that must not outlive its code.
inline void* openRuntime(const std::vector<const char*>& sonames,
                         GpuRuntimeProbe& probe) {
  for (const char* soname : sonames) {
    if (void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) {
      probe.library = soname;
      return handle;
    }
    const char* error = dlerror();
    probe.failure = error ? error : soname;
  }
  return nullptr;
}

template <typename Function>
Function symbol(void* handle, const char* name) {
  return reinterpret_cast<Function>(dlsym(handle, name));
}

// Sets deviceCount, or countError when the runtime refuses.
inline void countDevices(void* handle, const char* countName,
                         GpuRuntimeProbe& probe) {
  auto count = symbol<GetInt>(handle, countName);
  if (count == nullptr) {
    probe.countError = -1;
    probe.countErrorName = std::string("no ") + countName;
    return;
  }
  probe.countError = count(&probe.deviceCount);
  if (probe.countError != 0) probe.deviceCount = 0;
}

}  // namespace detail

// AMD: libamdhip64 (ROCm 7, 6 or 5, or the bare name PyTorch's ROCm wheels
// give it). version is HIP's: major * 10000000 + minor * 100000 + patch.
inline GpuRuntimeProbe probeHipRuntime() {
  GpuRuntimeProbe probe;
  void* hip = detail::openRuntime({"libamdhip64.so.7", "libamdhip64.so.6",
                                   "libamdhip64.so.5", "libamdhip64.so"},
                                  probe);
  if (hip == nullptr) return probe;
  if (auto version =
          detail::symbol<detail::GetInt>(hip, "hipRuntimeGetVersion"))
    version(&probe.version);
  detail::countDevices(hip, "hipGetDeviceCount", probe);
  using ErrorName = const char* (*)(int);
  auto name = detail::symbol<ErrorName>(hip, "hipGetErrorName");
  if (probe.countError > 0 && name != nullptr && name(probe.countError))
    probe.countErrorName = name(probe.countError);
  return probe;
}

// NVIDIA: the driver, libcuda.so.1 (the toolkit's runtime is not needed to
// count devices). version is CUDA's: major * 1000 + minor * 10.
inline GpuRuntimeProbe probeCudaDriver() {
  GpuRuntimeProbe probe;
  void* cuda = detail::openRuntime({"libcuda.so.1"}, probe);
  if (cuda == nullptr) return probe;
  if (auto version = detail::symbol<detail::GetInt>(cuda, "cuDriverGetVersion"))
    version(&probe.version);
  using Init = int (*)(unsigned);
  auto init = detail::symbol<Init>(cuda, "cuInit");
  probe.countError = init != nullptr ? init(0) : -1;
  if (probe.countError == 0)
    detail::countDevices(cuda, "cuDeviceGetCount", probe);
  using ErrorName = int (*)(int, const char**);
  auto name = detail::symbol<ErrorName>(cuda, "cuGetErrorName");
  const char* text = nullptr;
  if (probe.countError > 0 && name != nullptr &&
      name(probe.countError, &text) == 0 && text != nullptr)
    probe.countErrorName = text;
  return probe;
}

}  // namespace hetccl_info
