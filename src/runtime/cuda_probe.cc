#include "runtime/cuda_probe.h"

#include <dlfcn.h>

#include "util/env.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {

std::optional<int> currentCudaDevice() {
  if (envInt("HETCCL_FORCE_CPU", 0) != 0) return std::nullopt;
  using GetInt = int (*)(int*);  // cudaError_t is an int-sized enum
  auto getCount =
      reinterpret_cast<GetInt>(dlsym(RTLD_DEFAULT, "cudaGetDeviceCount"));
  auto getDevice =
      reinterpret_cast<GetInt>(dlsym(RTLD_DEFAULT, "cudaGetDevice"));
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
      reinterpret_cast<SetDevice>(dlsym(RTLD_DEFAULT, "cudaSetDevice"));
  if (setDevice == nullptr || setDevice(device) != 0)
    fail(ncclUnhandledCudaError, "cannot make CUDA device %d current", device);
}

}  // namespace hetccl
