#include "runtime/cuda_probe.h"

#include "runtime/loaded_runtime.h"
#include "util/error.h"

namespace hetccl {

namespace {

constexpr RuntimeSonames kCudartSonames = {"libcudart.so.13", "libcudart.so.12",
                                           "libcudart.so"};

}  // namespace

std::optional<int> currentCudaDevice() {
  return loadedRuntimeCurrentDevice(kCudartSonames, "cuda", "CUDA");
}

std::optional<int> cudaDeviceCount() {
  return loadedRuntimeDeviceCount(kCudartSonames, "cuda");
}

void setCurrentCudaDevice(int device) {
  using SetDevice = int (*)(int);
  auto setDevice = reinterpret_cast<SetDevice>(
      loadedRuntimeFunction(kCudartSonames, "cudaSetDevice"));
  if (setDevice == nullptr || setDevice(device) != 0)
    fail(ncclUnhandledCudaError, "cannot make CUDA device %d current", device);
}

}  // namespace hetccl
