#include "runtime/cuda/cuda_driver.h"

#include <cuda_runtime_api.h>

namespace hetccl {
namespace cuda {
namespace {

constexpr unsigned int kDriverApiVersion = 12000;

}  // namespace

int findDriverFunction(const char* name, void** function) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t error = cudaGetDriverEntryPointByVersion(
      name, &address, kDriverApiVersion, cudaEnableDefault, &found);
#else
  // Toolkits before 12.5 lack the versioned query; the unversioned one
  // gives the functions of the toolkit's own version, 12.0 or later here.
  const cudaError_t error =
      cudaGetDriverEntryPoint(name, &address, cudaEnableDefault, &found);
#endif
  if (error != cudaSuccess) return error;
  if (found == cudaDriverEntryPointVersionNotSufficent)
    return cudaErrorInsufficientDriver;
  if (found != cudaDriverEntryPointSuccess || address == nullptr)
    return cudaErrorSymbolNotFound;
  *function = address;
  return cudaSuccess;
}

}  // namespace cuda
}  // namespace hetccl
