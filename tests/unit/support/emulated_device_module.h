// A device-runtime module whose "GPU" is the host: streams are host
// streams, device memory is host memory, stream memory operations are
// atomic stores and polls, and reductions run on the host engine. The GPU
// paths of heterogeneous communicators (staging, the stream-driven
// all-reduce) run on it in CI exactly as they would enqueue on a GPU.
#pragma once

#include <functional>

#include "runtime/device/device_module_loader.h"

namespace hetccl {

const DeviceModule& emulatedDeviceModule();

// Runs `task` on a stream of the emulated module, in order with what is
// queued there (what a vendor library's kernels are to a GPU stream).
void enqueueOnEmulatedStream(void* stream, std::function<void()> task);

}  // namespace hetccl
