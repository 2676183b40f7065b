#include "runtime/cuda_probe.h"

#include <dlfcn.h>

#include "util/env.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {

namespace {

// A function of the CUDA runtime the program loaded: visible globally, or
// inside a libcudart that was loaded privately (Python extensions load
// theirs with RTLD_LOCAL). Never loads a runtime that is not there.
void* cudaRuntimeFunction(const char* name) {
  if (void* global = dlsym(RTLD_DEFAULT, name)) return global;
  for (const char* soname :
       {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}) {
    void* handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* function = dlsym(handle, name);
    dlclose(handle);  // drops only the reference NOLOAD took
    if (function != nullptr) return function;
  }
  return nullptr;
}

}  // namespace

std::optional<int> currentCudaDevice() {
  if (envInt("HETCCL_FORCE_CPU", 0) != 0) return std::nullopt;
  using GetInt = int (*)(int*);  // cudaError_t is an int-sized enum
  auto getCount =
      reinterpret_cast<GetInt>(cudaRuntimeFunction("cudaGetDeviceCount"));
  auto getDevice =
      reinterpret_cast<GetInt>(cudaRuntimeFunction("cudaGetDevice"));
  if (getCount == nullptr || getDevice == nullptr) return std::nullopt;
  int count = 0;
  int device = -1;
  if (getCount(&count) != 0 || count == 0 || getDevice(&device) != 0)
    return std::nullopt;
  LOG_INFO(kLogInit, "CUDA device %d of %d is current: this is a GPU rank",
           device, count);
  return device;
}

void setCurrentCudaDevice(int device) {
  using SetDevice = int (*)(int);
  auto setDevice =
      reinterpret_cast<SetDevice>(cudaRuntimeFunction("cudaSetDevice"));
  if (setDevice == nullptr || setDevice(device) != 0)
    fail(ncclUnhandledCudaError, "cannot make CUDA device %d current", device);
}

}  // namespace hetccl
