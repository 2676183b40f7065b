#include "runtime/hip_probe.h"

#include <dlfcn.h>

#include "util/env.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {

namespace {

// A function of the HIP runtime the program loaded: visible globally, or
// inside a libamdhip64 that was loaded privately (Python extensions load
// theirs with RTLD_LOCAL; PyTorch's ROCm wheels keep the versioned soname
// on a file renamed libamdhip64.so). RTLD_NOLOAD never loads a runtime
// that is not there.
void* hipRuntimeFunction(const char* name) {
  if (void* global = dlsym(RTLD_DEFAULT, name)) return global;
  for (const char* soname : {"libamdhip64.so.7", "libamdhip64.so.6",
                             "libamdhip64.so.5", "libamdhip64.so"}) {
    void* handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* function = dlsym(handle, name);
    dlclose(handle);  // drops only the reference NOLOAD took
    if (function != nullptr) return function;
  }
  return nullptr;
}

}  // namespace

std::optional<int> currentHipDevice() {
  if (envInt("HETCCL_FORCE_CPU", 0) != 0) return std::nullopt;
  using GetInt = int (*)(int*);  // hipError_t is an int-sized enum
  auto getCount =
      reinterpret_cast<GetInt>(hipRuntimeFunction("hipGetDeviceCount"));
  auto getDevice = reinterpret_cast<GetInt>(hipRuntimeFunction("hipGetDevice"));
  if (getCount == nullptr || getDevice == nullptr) return std::nullopt;
  int count = 0;
  int device = -1;
  if (getCount(&count) != 0 || count == 0 || getDevice(&device) != 0)
    return std::nullopt;
  LOG_INFO(kLogInit, "HIP device %d of %d is current: this is a GPU rank",
           device, count);
  return device;
}

void setCurrentHipDevice(int device) {
  using SetDevice = int (*)(int);
  auto setDevice =
      reinterpret_cast<SetDevice>(hipRuntimeFunction("hipSetDevice"));
  if (setDevice == nullptr)
    fail(ncclUnhandledCudaError,
         "cannot make HIP device %d current: no HIP runtime is loaded", device);
  int error = setDevice(device);
  if (error != 0)
    fail(ncclUnhandledCudaError,
         "cannot make HIP device %d current (hipSetDevice error %d)", device,
         error);
}

}  // namespace hetccl
