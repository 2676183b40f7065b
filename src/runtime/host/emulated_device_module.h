// A device-runtime module whose "GPU" is the host: streams are the host
// runtime's streams, device memory is host memory, stream memory
// operations are atomic stores and polls, and reductions run on the host
// engine. With HETCCL_EMULATED_GPU=1 a CPU process is a GPU rank on it, so
// the GPU engine runs in CI (threads, processes, network namespaces) exactly
// as it would enqueue on a GPU; unit tests use it directly.
#pragma once

#include "runtime/device/device_module_loader.h"

namespace hetccl {

const DeviceModule& emulatedDeviceModule();

}  // namespace hetccl
