// A device-runtime module whose "GPU" is the host: streams are host
// streams, device memory is host memory, stream memory operations are
// atomic stores and polls, and reductions run on the host engine. The GPU
// paths of heterogeneous communicators (staging, the stream-driven
// all-reduce) run on it in CI exactly as they would enqueue on a GPU.
#pragma once

#include "runtime/device/device_module_loader.h"

namespace hetccl {

const DeviceModule& emulatedDeviceModule();

}  // namespace hetccl
