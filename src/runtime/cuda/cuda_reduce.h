// The CUDA module's kernels: device_kernels.h launched on a CUDA stream.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/device/device_module.h"

namespace hetccl {
namespace cuda {

// Enqueues the reduction on `stream`. Returns 0, cudaErrorInvalidValue for
// arguments the kernels cannot take, or the launch's error.
int reduceAsync(const hetcclDeviceReduction& reduction, cudaStream_t stream);

// Enqueues the low-latency collective on `stream` (device_module.h), with
// the same answers.
int lowLatencyCollective(const hetcclDeviceLowLatencyCollective& collective,
                         cudaStream_t stream);

// Enqueues the staged copy on `stream` (device_module.h), with the same
// answers.
int stagedCopy(const hetcclDeviceStagedCopy& copy, cudaStream_t stream);

// Loads every kernel on the current device (see device_module.h).
int loadKernels();

}  // namespace cuda
}  // namespace hetccl
