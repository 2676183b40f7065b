#include "runtime/cuda/cuda_stream_memops.h"

#include <cuda.h>  // driver types and flag values only; libcuda is not linked

#include "runtime/cuda/cuda_driver.h"

namespace hetccl {
namespace cuda {
namespace {

// cuStreamWriteValue64 and cuStreamWaitValue64 share this signature.
using StreamValue64Fn = CUresult (*)(CUstream stream, CUdeviceptr address,
                                     cuuint64_t value, unsigned int flags);

struct StreamMemOps {
  StreamValue64Fn write = nullptr;
  StreamValue64Fn wait = nullptr;
  int error = cudaSuccess;  // why they could not be found
};

StreamMemOps findStreamMemOps() {
  StreamMemOps ops;
  void* write = nullptr;
  void* wait = nullptr;
  ops.error = findDriverFunction("cuStreamWriteValue64", &write);
  if (ops.error == cudaSuccess)
    ops.error = findDriverFunction("cuStreamWaitValue64", &wait);
  ops.write = reinterpret_cast<StreamValue64Fn>(write);
  ops.wait = reinterpret_cast<StreamValue64Fn>(wait);
  return ops;
}

// Found once; without a driver, every later call returns the same error
// (a driver does not appear in a running process).
const StreamMemOps& streamMemOps() {
  static const StreamMemOps ops = findStreamMemOps();
  return ops;
}

// The stream waits until the word at `address` passes `flags`'s test
// against `value`.
int wait64(cudaStream_t stream, const uint64_t* address, uint64_t value,
           unsigned int flags) {
  const StreamMemOps& ops = streamMemOps();
  if (ops.error != cudaSuccess) return ops.error;
  return ops.wait(reinterpret_cast<CUstream>(stream),
                  reinterpret_cast<CUdeviceptr>(address), value, flags);
}

}  // namespace

int writeValue64(cudaStream_t stream, uint64_t* address, uint64_t value) {
  const StreamMemOps& ops = streamMemOps();
  if (ops.error != cudaSuccess) return ops.error;
  return ops.write(reinterpret_cast<CUstream>(stream),
                   reinterpret_cast<CUdeviceptr>(address), value,
                   CU_STREAM_WRITE_VALUE_DEFAULT);
}

int waitValue64(cudaStream_t stream, const uint64_t* address, uint64_t value) {
  return wait64(stream, address, value, CU_STREAM_WAIT_VALUE_GEQ);
}

int waitBits64(cudaStream_t stream, const uint64_t* address, uint64_t bits) {
  return wait64(stream, address, bits, CU_STREAM_WAIT_VALUE_AND);
}

}  // namespace cuda
}  // namespace hetccl
