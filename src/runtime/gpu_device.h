// The GPU a rank runs on, if any: the device current on the thread that
// creates the communicator, in the CUDA or HIP runtime the program loaded.
#pragma once

#include <optional>

#include "runtime/device/device_module_loader.h"
#include "runtime/runtime.h"

namespace hetccl {

struct GpuDevice {
  RuntimeKind runtime;  // Cuda or Hip
  int ordinal;
  // HETCCL_EMULATED_GPU: the "GPU" is the host (emulated device module),
  // and its domains run on the host collectives.
  bool emulated = false;

  // The runtime whose domain back-end runs this GPU's domains.
  RuntimeKind domainRuntime() const {
    return emulated ? RuntimeKind::Host : runtime;
  }
};

// CUDA's current device, else HIP's, else nothing (a CPU rank); with
// HETCCL_EMULATED_GPU=1, device 0 of the emulated module.
std::optional<GpuDevice> currentGpuDevice();

// How many devices `gpu`'s runtime sees (0 if it cannot say).
int deviceCountOf(const GpuDevice& gpu);

// The device-runtime module that drives `gpu`.
const DeviceModule& deviceModuleOf(const GpuDevice& gpu);

}  // namespace hetccl
