// Whether this process is an AMD GPU rank: the HIP device current on the
// calling thread, asked of the HIP runtime the program itself loaded
// (PyTorch's ROCm build, or an application linked with libamdhip64).
// HetCCL's core does not link HIP and never loads it from here, so a
// process without it is not an AMD rank.
#pragma once

#include <optional>

namespace hetccl {

// The current device's ordinal, or nothing when no HIP runtime is loaded,
// no device exists, or HETCCL_FORCE_CPU=1.
std::optional<int> currentHipDevice();

// How many devices the program's runtime sees; nothing without one.
std::optional<int> hipDeviceCount();

// Makes `device` current on the calling thread (a background init runs on
// a thread of its own, where the user's choice of device does not hold).
// Throws ncclUnhandledCudaError when no HIP runtime is loaded or it
// refuses.
void setCurrentHipDevice(int device);

}  // namespace hetccl
