#include "runtime/loaded_runtime.h"

#include <dlfcn.h>

#include <string>

#include "runtime/runtime_params.h"
#include "util/log.h"

namespace hetccl {

void* loadedRuntimeFunction(const RuntimeSonames& sonames, const char* name) {
  if (void* global = dlsym(RTLD_DEFAULT, name)) return global;
  for (const char* soname : sonames) {
    // RTLD_NOLOAD only finds a library already loaded, never loads one.
    void* handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* function = dlsym(handle, name);
    dlclose(handle);  // drops only the reference NOLOAD took
    if (function != nullptr) return function;
  }
  return nullptr;
}

std::optional<int> loadedRuntimeCurrentDevice(const RuntimeSonames& sonames,
                                              const char* prefix,
                                              const char* label) {
  if (readFlag(kForceCpu)) return std::nullopt;
  // cudaError_t and hipError_t are int-sized enums.
  using GetInt = int (*)(int*);
  auto function = [&](const char* suffix) {
    std::string name = std::string(prefix) + suffix;
    return reinterpret_cast<GetInt>(
        loadedRuntimeFunction(sonames, name.c_str()));
  };
  GetInt getCount = function("GetDeviceCount");
  GetInt getDevice = function("GetDevice");
  if (getCount == nullptr || getDevice == nullptr) return std::nullopt;
  int count = 0;
  int device = -1;
  if (int error = getCount(&count); error != 0 || count == 0) {
    LOG_INFO(kLogInit,
             "the program's %s runtime is loaded but reports no device "
             "(%sGetDeviceCount: error %d, %d devices)",
             label, prefix, error, count);
    return std::nullopt;
  }
  if (getDevice(&device) != 0) return std::nullopt;
  LOG_INFO(kLogInit, "%s device %d of %d is current: this is a GPU rank", label,
           device, count);
  return device;
}

std::optional<int> loadedRuntimeDeviceCount(const RuntimeSonames& sonames,
                                            const char* prefix) {
  using GetInt = int (*)(int*);
  const std::string name = std::string(prefix) + "GetDeviceCount";
  auto getCount =
      reinterpret_cast<GetInt>(loadedRuntimeFunction(sonames, name.c_str()));
  int count = 0;
  if (getCount == nullptr || getCount(&count) != 0) return std::nullopt;
  return count;
}

}  // namespace hetccl
