// CUDA's stream memory operations on 64-bit words (cuStreamWriteValue64,
// cuStreamWaitValue64). They are driver API functions, and the CUDA module
// does not link libcuda (so that it loads where no NVIDIA driver is
// installed): they are found through the runtime's driver entry points on
// first use, once per process.
#pragma once

#include <cuda_runtime_api.h>
#include <stdint.h>

namespace hetccl {
namespace cuda {

// The stream stores `value` into the host-mapped word at `address` once the
// work queued before it has finished (after a memory fence, the driver's
// default). Returns 0 or an error code: the runtime's, or the driver's
// CUresult, whose numbers coincide with the runtime's for the same errors.
int writeValue64(cudaStream_t stream, uint64_t* address, uint64_t value);

// The stream waits until *address >= value (compared as the driver does,
// as a signed 64-bit difference, so the word may wrap around).
int waitValue64(cudaStream_t stream, const uint64_t* address, uint64_t value);

// The stream waits until (*address & bits) != 0.
int waitBits64(cudaStream_t stream, const uint64_t* address, uint64_t bits);

}  // namespace cuda
}  // namespace hetccl
