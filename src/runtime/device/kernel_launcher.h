// How device_kernels.h reaches a CUDA-like runtime, written once for CUDA
// and HIP: a module defines HETCCL_RT and HETCCL_RT_NAMESPACE as for
// runtime_table.h and includes this file in the one source that compiles
// the kernels.
#pragma once

#include "runtime/device/device_kernels.h"

#if !defined(HETCCL_RT) || !defined(HETCCL_RT_NAMESPACE)
#error "define HETCCL_RT and HETCCL_RT_NAMESPACE before kernel_launcher.h"
#endif

namespace hetccl {
namespace HETCCL_RT_NAMESPACE {
namespace {

// Launches the kernels and copies of a reduction on a stream.
class Launcher {
 public:
  explicit Launcher(HETCCL_RT(Stream_t) stream) : stream_(stream) {}

  template <typename Args>
  int launch(void (*kernel)(Args), const Args& args,
             device::LaunchShape shape) {
    void* params[] = {const_cast<Args*>(&args)};
    return HETCCL_RT(LaunchKernel)(reinterpret_cast<const void*>(kernel),
                                   dim3(shape.blocks), dim3(shape.threads),
                                   params, 0, stream_);
  }

  int copy(void* dst, const void* src, size_t bytes) {
    return HETCCL_RT(MemcpyAsync)(dst, src, bytes, HETCCL_RT(MemcpyDefault),
                                  stream_);
  }

  int invalidValue() const { return HETCCL_RT(ErrorInvalidValue); }

 private:
  HETCCL_RT(Stream_t) stream_;
};

// Loads each kernel instead of launching it: asking for a function's
// attributes makes the runtime load it.
class KernelLoader {
 public:
  template <typename Args>
  int launch(void (*kernel)(Args), const Args&, device::LaunchShape) {
    HETCCL_RT(FuncAttributes) attributes;
    return HETCCL_RT(FuncGetAttributes)(&attributes,
                                        reinterpret_cast<const void*>(kernel));
  }
  int copy(void*, const void*, size_t) { return 0; }
  int invalidValue() const { return HETCCL_RT(ErrorInvalidValue); }
};

}  // namespace
}  // namespace HETCCL_RT_NAMESPACE
}  // namespace hetccl
