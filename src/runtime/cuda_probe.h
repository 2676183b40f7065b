// Whether this process is a GPU rank: the CUDA device current on the
// calling thread, asked of the CUDA runtime the program itself loaded
// (PyTorch, or an application linked with cudart). HetCCL's core does not
// link CUDA, so a process without it is simply a CPU rank.
#pragma once

#include <optional>

namespace hetccl {

// The current device's ordinal, or nothing when no CUDA runtime is loaded,
// no device exists, or HETCCL_FORCE_CPU=1.
std::optional<int> currentCudaDevice();

// How many devices the program's runtime sees; nothing without one.
std::optional<int> cudaDeviceCount();

// Makes `device` current on the calling thread (a background init runs on
// a thread of its own, where the user's choice of device does not hold).
void setCurrentCudaDevice(int device);

}  // namespace hetccl
