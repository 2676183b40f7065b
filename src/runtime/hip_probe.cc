#include "runtime/hip_probe.h"

#include "runtime/loaded_runtime.h"
#include "util/error.h"

namespace hetccl {

namespace {

// PyTorch's ROCm wheels keep the versioned soname on a file renamed
// libamdhip64.so, hence the unversioned name last.
constexpr RuntimeSonames kAmdhipSonames = {
    "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
    "libamdhip64.so"};

}  // namespace

std::optional<int> currentHipDevice() {
  return loadedRuntimeCurrentDevice(kAmdhipSonames, "hip", "HIP");
}

std::optional<int> hipDeviceCount() {
  return loadedRuntimeDeviceCount(kAmdhipSonames, "hip");
}

void setCurrentHipDevice(int device) {
  using SetDevice = int (*)(int);
  auto setDevice = reinterpret_cast<SetDevice>(
      loadedRuntimeFunction(kAmdhipSonames, "hipSetDevice"));
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
