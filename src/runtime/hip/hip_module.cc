// libhetccl-hip.so: the device-module table (runtime/device/device_module.h)
// over the HIP runtime (runtime_table.h has the entries CUDA and HIP spell
// alike and fills the table, HipRuntime below what HIP does its own way),
// with the reduction kernels of device_kernels.h.
// Compiled by hipcc with -ffp-contract=off (see device_kernels.h). Only
// hetcclDeviceModule leaves the library (a version script hides the rest).
//
// The module links libamdhip64 dynamically (HIP has no static runtime), so
// it loads only where the ROCm runtime of its major version is installed;
// without an AMD GPU its functions return hipErrorNoDevice.
#include <hip/hip_runtime.h>
#include <stdint.h>

#define HETCCL_RT(name) hip##name
#define HETCCL_RT_NAMESPACE hip
#include "runtime/device/kernel_launcher.h"
#include "runtime/device/runtime_table.h"

namespace hetccl {
namespace hip {
namespace {

// What HIP does its own way; runtime_table.h fills the table with it.
struct HipRuntime {
  static constexpr const char* kName = "hip";

  static int memoryKind(const void* pointer, int* kind) {
    hipPointerAttribute_t attributes{};
    const hipError_t error = hipPointerGetAttributes(&attributes, pointer);
    if (error == hipErrorInvalidValue) {
      // ROCm 5 answers "invalid value" for memory it does not know; the error
      // must not linger for the next hipGetLastError.
      (void)hipGetLastError();
      *kind = hetcclMemoryUnknown;
      return hipSuccess;
    }
    if (error != hipSuccess) return error;
#if HIP_VERSION_MAJOR >= 6
    const hipMemoryType type = attributes.type;  // renamed in ROCm 6
#else
    const hipMemoryType type = attributes.memoryType;
#endif
    if (attributes.isManaged) {
      *kind = hetcclMemoryManaged;
    } else if (type == hipMemoryTypeHost) {
      *kind = hetcclMemoryHost;
    } else if (type == hipMemoryTypeDevice || type == hipMemoryTypeArray) {
      *kind = hetcclMemoryDevice;
    } else {
      *kind = hetcclMemoryUnknown;
    }
    return hipSuccess;
  }

  // As the CUDA module: relaxed capture mode around it, so that a staging
  // slot may grow in a captured launch.
  static int hostAlloc(void** pointer, size_t bytes) {
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    const hipError_t swapped = hipThreadExchangeStreamCaptureMode(&mode);
    if (swapped != hipSuccess) return swapped;
    const hipError_t status = hipHostMalloc(
        pointer, bytes, hipHostMallocPortable | hipHostMallocMapped);
    const hipError_t restored = hipThreadExchangeStreamCaptureMode(&mode);
    if (status != hipSuccess) return status;
    if (restored != hipSuccess)
      (void)hipHostFree(*pointer);  // reported instead
    return restored;
  }

  static int hostFree(void* pointer) { return hipHostFree(pointer); }

  static int writeValue64(void* stream, uint64_t* address, uint64_t value) {
    return hipStreamWriteValue64(asStream(stream), address, value, 0);
  }

  static int waitValue64(void* stream, const uint64_t* address,
                         uint64_t value) {
    // HIP's signature takes a non-const pointer; the word is only read.
    return hipStreamWaitValue64(asStream(stream),
                                const_cast<uint64_t*>(address), value,
                                hipStreamWaitValueGte, ~uint64_t(0));
  }

  static int waitBits64(void* stream, const uint64_t* address, uint64_t bits) {
    return hipStreamWaitValue64(asStream(stream),
                                const_cast<uint64_t*>(address), bits,
                                hipStreamWaitValueAnd, ~uint64_t(0));
  }

  static int reduceAsync(const hetcclDeviceReduction* reduction, void* stream) {
    if (reduction == nullptr) return hipErrorInvalidValue;
    Launcher launcher(asStream(stream));
    return device::enqueueReduction(*reduction, launcher);
  }

  static int lowLatencyCollective(
      const hetcclDeviceLowLatencyCollective* collective, void* stream) {
    if (collective == nullptr) return hipErrorInvalidValue;
    Launcher launcher(asStream(stream));
    return device::enqueueLowLatencyCollective(*collective, launcher);
  }

  static int stagedCopy(const hetcclDeviceStagedCopy* copy, void* stream) {
    if (copy == nullptr) return hipErrorInvalidValue;
    Launcher launcher(asStream(stream));
    return device::enqueueStagedCopy(*copy, launcher);
  }

  static int loadKernels() {
    KernelLoader loader;
    return device::visitEveryKernel(loader);
  }

  // HIP's DMA-BUF export (hipMemGetHandleForAddressRange) is newer than
  // the HIP this module is built against (Debian 12's); until it is used,
  // AMD GPU buffers on a plugin of DMA-BUF only are staged.
  static int dmaBufSupported(int* supported) {
    *supported = 0;
    return hipSuccess;
  }

  static int exportDmaBuf(const void*, int*, uint64_t*) {
    return hipErrorNotSupported;
  }
};

}  // namespace
}  // namespace hip
}  // namespace hetccl

extern "C" __attribute__((visibility("default"))) const hetcclDeviceModuleTable*
hetcclDeviceModule(void) {
  return hetccl::hip::moduleTable<hetccl::hip::HipRuntime>();
}
