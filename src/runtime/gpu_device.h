// The GPU a rank runs on, if any: the device current on the thread that
// creates the communicator, in the CUDA or HIP runtime the program loaded.
#pragma once

#include <optional>

#include "runtime/runtime.h"

namespace hetccl {

struct GpuDevice {
  RuntimeKind runtime;  // Cuda or Hip
  int ordinal;
};

// CUDA's current device, else HIP's, else nothing (a CPU rank).
std::optional<GpuDevice> currentGpuDevice();

}  // namespace hetccl
