// libhetccl-cuda.so: the device-module table (runtime/device/device_module.h)
// over the CUDA runtime. The runtime is linked statically and the driver is
// reached only through it, so the module loads on machines without an
// NVIDIA driver; its functions then return cudaErrorInsufficientDriver or
// cudaErrorNoDevice. Only hetcclDeviceModule leaves the library (a version
// script hides the rest, the static runtime included, so that its calls
// never bind to another copy of cudart that the program loaded).
#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_reduce.h"
#include "runtime/cuda/cuda_stream_memops.h"
#include "runtime/device/device_module.h"

namespace hetccl {
namespace cuda {
namespace {

cudaStream_t asStream(void* stream) {
  return static_cast<cudaStream_t>(stream);
}

cudaEvent_t asEvent(void* event) { return static_cast<cudaEvent_t>(event); }

const char* errorString(int code) {
  return cudaGetErrorString(static_cast<cudaError_t>(code));
}

int versions(int* runtimeVersion, int* driverVersion) {
  const cudaError_t error = cudaRuntimeGetVersion(runtimeVersion);
  if (error != cudaSuccess) return error;
  return cudaDriverGetVersion(driverVersion);  // 0 without a driver
}

int deviceCount(int* count) { return cudaGetDeviceCount(count); }

int getDevice(int* device) { return cudaGetDevice(device); }

int setDevice(int device) { return cudaSetDevice(device); }

int deviceBusId(int device, char* busId, int length) {
  return cudaDeviceGetPCIBusId(busId, length, device);
}

int memoryKind(const void* pointer, int* kind) {
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, pointer);
  if (error == cudaErrorInvalidValue) {
    // Memory the runtime does not know (older runtimes say so with an
    // error, which must not linger for the next cudaGetLastError).
    cudaGetLastError();
    *kind = hetcclMemoryUnknown;
    return cudaSuccess;
  }
  if (error != cudaSuccess) return error;
  switch (attributes.type) {
    case cudaMemoryTypeHost:
      *kind = hetcclMemoryHost;
      break;
    case cudaMemoryTypeDevice:
      *kind = hetcclMemoryDevice;
      break;
    case cudaMemoryTypeManaged:
      *kind = hetcclMemoryManaged;
      break;
    default:
      *kind = hetcclMemoryUnknown;
      break;
  }
  return cudaSuccess;
}

int deviceAlloc(void** pointer, size_t bytes) {
  return cudaMalloc(pointer, bytes);
}

int deviceFree(void* pointer) { return cudaFree(pointer); }

int hostAlloc(void** pointer, size_t bytes) {
  return cudaHostAlloc(pointer, bytes,
                       cudaHostAllocPortable | cudaHostAllocMapped);
}

int hostFree(void* pointer) { return cudaFreeHost(pointer); }

int hostRegister(void* pointer, size_t bytes) {
  return cudaHostRegister(pointer, bytes,
                          cudaHostRegisterPortable | cudaHostRegisterMapped);
}

int hostUnregister(void* pointer) { return cudaHostUnregister(pointer); }

int streamCreate(void** stream) {
  cudaStream_t created = nullptr;
  const cudaError_t error =
      cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
  if (error == cudaSuccess) *stream = created;
  return error;
}

int streamDestroy(void* stream) { return cudaStreamDestroy(asStream(stream)); }

int streamSynchronize(void* stream) {
  return cudaStreamSynchronize(asStream(stream));
}

// cudaErrorNotReady is an answer, not a failure.
int readiness(cudaError_t error, int* ready) {
  if (error == cudaErrorNotReady) {
    *ready = 0;
    return cudaSuccess;
  }
  if (error == cudaSuccess) *ready = 1;
  return error;
}

int streamQuery(void* stream, int* idle) {
  return readiness(cudaStreamQuery(asStream(stream)), idle);
}

// An invalidated capture is still a capture: the stream stays in capture
// mode until the capture ends, and work queued meanwhile does not run.
int streamIsCapturing(void* stream, int* capturing) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t error = cudaStreamIsCapturing(asStream(stream), &status);
  if (error == cudaSuccess) *capturing = status != cudaStreamCaptureStatusNone;
  return error;
}

int eventCreate(void** event) {
  cudaEvent_t created = nullptr;
  const cudaError_t error =
      cudaEventCreateWithFlags(&created, cudaEventDisableTiming);
  if (error == cudaSuccess) *event = created;
  return error;
}

int eventDestroy(void* event) { return cudaEventDestroy(asEvent(event)); }

int eventRecord(void* event, void* stream) {
  return cudaEventRecord(asEvent(event), asStream(stream));
}

int eventQuery(void* event, int* done) {
  return readiness(cudaEventQuery(asEvent(event)), done);
}

int eventSynchronize(void* event) {
  return cudaEventSynchronize(asEvent(event));
}

int streamWaitEvent(void* stream, void* event) {
  return cudaStreamWaitEvent(asStream(stream), asEvent(event), 0);
}

int copyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, asStream(stream));
}

int streamWriteValue64(void* stream, uint64_t* address, uint64_t value) {
  return writeValue64(asStream(stream), address, value);
}

int streamWaitValue64(void* stream, const uint64_t* address, uint64_t value) {
  return waitValue64(asStream(stream), address, value);
}

int reduce(const hetcclDeviceReduction* reduction, void* stream) {
  if (reduction == nullptr) return cudaErrorInvalidValue;
  return reduceAsync(*reduction, asStream(stream));
}

// Filled by name: many entries share a signature, so an order mistake in
// a positional initialiser would go unnoticed by the compiler.
hetcclDeviceModuleTable makeTable() {
  hetcclDeviceModuleTable table{};
  table.abiVersion = HETCCL_DEVICE_MODULE_ABI;
  table.runtimeName = "cuda";
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
  table.writeValue64 = streamWriteValue64;
  table.waitValue64 = streamWaitValue64;
  table.reduceAsync = reduce;
  table.loadKernels = loadKernels;
  return table;
}

}  // namespace
}  // namespace cuda
}  // namespace hetccl

extern "C" __attribute__((visibility("default"))) const hetcclDeviceModuleTable*
hetcclDeviceModule(void) {
  static const hetcclDeviceModuleTable table = hetccl::cuda::makeTable();
  return &table;
}
