// Driver API functions of the CUDA module: the module does not link libcuda
// (so that it loads where no NVIDIA driver is installed), so they are found
// through the runtime's driver entry points.
#pragma once

namespace hetccl {
namespace cuda {

// The driver's function `name` at the ABI of CUDA 12.0 (the first with the
// _v2 functions as the default ones) into *function. Returns 0 or the
// runtime's error (cudaErrorInsufficientDriver, cudaErrorSymbolNotFound).
int findDriverFunction(const char* name, void** function);

}  // namespace cuda
}  // namespace hetccl
