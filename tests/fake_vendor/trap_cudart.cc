// A CUDA runtime that must never be used: every function hetccl-perf looks
// up ends the process, naming itself. Put first on LD_LIBRARY_PATH as
// libcudart.so.13, it shows that HETCCL_FORCE_CPU=1 keeps the tools off
// the GPU runtime entirely (without it, hetccl-perf's first call ends the
// run).
#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void trap(const char* function) {
  std::fprintf(stderr, "trap libcudart: %s was called\n", function);
  std::abort();
}

}  // namespace

#define TRAP(name) \
  extern "C" __attribute__((visibility("default"))) int name() { trap(#name); }

TRAP(cudaGetDeviceCount)
TRAP(cudaSetDevice)
TRAP(cudaGetDevice)
TRAP(cudaMalloc)
TRAP(cudaFree)
TRAP(cudaMemcpy)
TRAP(cudaStreamCreateWithFlags)
TRAP(cudaStreamSynchronize)
TRAP(cudaStreamQuery)
TRAP(cudaStreamDestroy)
TRAP(cudaDeviceGetPCIBusId)
TRAP(cudaGetErrorString)
