// libhetccl-hip.so: the device-module table (runtime/device/device_module.h)
// over the HIP runtime, with the reduction kernels of device_kernels.h.
// Compiled by hipcc with -ffp-contract=off (see device_kernels.h). Only
// hetcclDeviceModule leaves the library (a version script hides the rest).
//
// The module links libamdhip64 dynamically (HIP has no static runtime), so
// it loads only where the ROCm runtime of its major version is installed;
// without an AMD GPU its functions return hipErrorNoDevice.
#include <hip/hip_runtime.h>
#include <stdint.h>

#include "runtime/device/device_kernels.h"
#include "runtime/device/device_module.h"

namespace hetccl {
namespace hip {
namespace {

hipStream_t asStream(void* stream) { return static_cast<hipStream_t>(stream); }

hipEvent_t asEvent(void* event) { return static_cast<hipEvent_t>(event); }

const char* errorString(int code) {
  return hipGetErrorString(static_cast<hipError_t>(code));
}

int versions(int* runtimeVersion, int* driverVersion) {
  const hipError_t error = hipRuntimeGetVersion(runtimeVersion);
  if (error != hipSuccess) return error;
  return hipDriverGetVersion(driverVersion);
}

int deviceCount(int* count) { return hipGetDeviceCount(count); }

int getDevice(int* device) { return hipGetDevice(device); }

int setDevice(int device) { return hipSetDevice(device); }

int deviceBusId(int device, char* busId, int length) {
  return hipDeviceGetPCIBusId(busId, length, device);
}

int memoryKind(const void* pointer, int* kind) {
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

int deviceAlloc(void** pointer, size_t bytes) {
  return hipMalloc(pointer, bytes);
}

int deviceFree(void* pointer) { return hipFree(pointer); }

int hostAlloc(void** pointer, size_t bytes) {
  return hipHostMalloc(pointer, bytes,
                       hipHostMallocPortable | hipHostMallocMapped);
}

int hostFree(void* pointer) { return hipHostFree(pointer); }

int hostRegister(void* pointer, size_t bytes) {
  return hipHostRegister(pointer, bytes,
                         hipHostRegisterPortable | hipHostRegisterMapped);
}

int hostUnregister(void* pointer) { return hipHostUnregister(pointer); }

int streamCreate(void** stream) {
  hipStream_t created = nullptr;
  const hipError_t error =
      hipStreamCreateWithFlags(&created, hipStreamNonBlocking);
  if (error == hipSuccess) *stream = created;
  return error;
}

int streamDestroy(void* stream) { return hipStreamDestroy(asStream(stream)); }

int streamSynchronize(void* stream) {
  return hipStreamSynchronize(asStream(stream));
}

// hipErrorNotReady is an answer, not a failure.
int readiness(hipError_t error, int* ready) {
  if (error == hipErrorNotReady) {
    *ready = 0;
    return hipSuccess;
  }
  if (error == hipSuccess) *ready = 1;
  return error;
}

int streamQuery(void* stream, int* idle) {
  return readiness(hipStreamQuery(asStream(stream)), idle);
}

// An invalidated capture is still a capture: the stream stays in capture
// mode until the capture ends.
int streamIsCapturing(void* stream, int* capturing) {
  hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
  const hipError_t error = hipStreamIsCapturing(asStream(stream), &status);
  if (error == hipSuccess) *capturing = status != hipStreamCaptureStatusNone;
  return error;
}

int eventCreate(void** event) {
  hipEvent_t created = nullptr;
  const hipError_t error =
      hipEventCreateWithFlags(&created, hipEventDisableTiming);
  if (error == hipSuccess) *event = created;
  return error;
}

int eventDestroy(void* event) { return hipEventDestroy(asEvent(event)); }

int eventRecord(void* event, void* stream) {
  return hipEventRecord(asEvent(event), asStream(stream));
}

int eventQuery(void* event, int* done) {
  return readiness(hipEventQuery(asEvent(event)), done);
}

int eventSynchronize(void* event) {
  return hipEventSynchronize(asEvent(event));
}

int streamWaitEvent(void* stream, void* event) {
  return hipStreamWaitEvent(asStream(stream), asEvent(event), 0);
}

int copyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  return hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, asStream(stream));
}

int writeValue64(void* stream, uint64_t* address, uint64_t value) {
  return hipStreamWriteValue64(asStream(stream), address, value, 0);
}

int waitValue64(void* stream, const uint64_t* address, uint64_t value) {
  // HIP's signature takes a non-const pointer; the word is only read.
  return hipStreamWaitValue64(asStream(stream), const_cast<uint64_t*>(address),
                              value, hipStreamWaitValueGte, ~uint64_t(0));
}

// How device_kernels.h reaches the HIP runtime.
class Launcher {
 public:
  explicit Launcher(hipStream_t stream) : stream_(stream) {}

  template <typename Args>
  int launch(void (*kernel)(Args), const Args& args,
             device::LaunchShape shape) {
    void* params[] = {const_cast<Args*>(&args)};
    return hipLaunchKernel(reinterpret_cast<const void*>(kernel),
                           dim3(shape.blocks), dim3(shape.threads), params, 0,
                           stream_);
  }

  int copy(void* dst, const void* src, size_t bytes) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, stream_);
  }

  int invalidValue() const { return hipErrorInvalidValue; }

 private:
  hipStream_t stream_;
};

// Loads each kernel instead of launching it: asking for a function's
// attributes makes the runtime load it.
class KernelLoader {
 public:
  template <typename Args>
  int launch(void (*kernel)(Args), const Args&, device::LaunchShape) {
    hipFuncAttributes attributes;
    return hipFuncGetAttributes(&attributes,
                                reinterpret_cast<const void*>(kernel));
  }
  int copy(void*, const void*, size_t) { return 0; }
  int invalidValue() const { return hipErrorInvalidValue; }
};

int loadKernels() {
  KernelLoader loader;
  return device::visitEveryKernel(loader);
}

int reduceAsync(const hetcclDeviceReduction* reduction, void* stream) {
  if (reduction == nullptr) return hipErrorInvalidValue;
  Launcher launcher(asStream(stream));
  return device::enqueueReduction(*reduction, launcher);
}

// Filled by name: many entries share a signature, so an order mistake in
// a positional initialiser would go unnoticed by the compiler.
hetcclDeviceModuleTable makeTable() {
  hetcclDeviceModuleTable table{};
  table.abiVersion = HETCCL_DEVICE_MODULE_ABI;
  table.runtimeName = "hip";
  table.errorString = errorString;
  table.versions = versions;
  table.deviceCount = deviceCount;
  table.getDevice = getDevice;
  table.setDevice = setDevice;
  table.deviceBusId = deviceBusId;
  table.memoryKind = memoryKind;
  table.deviceAlloc = deviceAlloc;
  table.deviceFree = deviceFree;
  table.hostAlloc = hostAlloc;
  table.hostFree = hostFree;
  table.hostRegister = hostRegister;
  table.hostUnregister = hostUnregister;
  table.streamCreate = streamCreate;
  table.streamDestroy = streamDestroy;
  table.streamSynchronize = streamSynchronize;
  table.streamQuery = streamQuery;
  table.streamIsCapturing = streamIsCapturing;
  table.eventCreate = eventCreate;
  table.eventDestroy = eventDestroy;
  table.eventRecord = eventRecord;
  table.eventQuery = eventQuery;
  table.eventSynchronize = eventSynchronize;
  table.streamWaitEvent = streamWaitEvent;
  table.copyAsync = copyAsync;
  table.writeValue64 = writeValue64;
  table.waitValue64 = waitValue64;
  table.reduceAsync = reduceAsync;
  table.loadKernels = loadKernels;
  return table;
}

}  // namespace
}  // namespace hip
}  // namespace hetccl

extern "C" __attribute__((visibility("default"))) const hetcclDeviceModuleTable*
hetcclDeviceModule(void) {
  static const hetcclDeviceModuleTable table = hetccl::hip::makeTable();
  return &table;
}
