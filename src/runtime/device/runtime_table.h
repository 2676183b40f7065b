// A device-module table over a CUDA-like runtime, written once: the entries
// that the CUDA and HIP runtimes spell alike, and the filling of the whole
// table. A module includes its runtime's header, then defines
//   HETCCL_RT(name)      its runtime's name for `name` (cuda##name, hip##name)
//   HETCCL_RT_NAMESPACE  the namespace of its definitions (cuda, hip)
// and includes this file, in exactly one of its sources (it defines
// functions). It then defines a struct of what differs (see makeTable) and
// returns moduleTable<thatStruct>() from its hetcclDeviceModule.
#pragma once

#include "runtime/device/device_module.h"

#if !defined(HETCCL_RT) || !defined(HETCCL_RT_NAMESPACE)
#error "define HETCCL_RT and HETCCL_RT_NAMESPACE before runtime_table.h"
#endif

namespace hetccl {
namespace HETCCL_RT_NAMESPACE {
namespace {

using RuntimeError = HETCCL_RT(Error_t);
using RuntimeStream = HETCCL_RT(Stream_t);
using RuntimeEvent = HETCCL_RT(Event_t);

RuntimeStream asStream(void* stream) {
  return static_cast<RuntimeStream>(stream);
}

RuntimeEvent asEvent(void* event) { return static_cast<RuntimeEvent>(event); }

const char* errorString(int code) {
  return HETCCL_RT(GetErrorString)(static_cast<RuntimeError>(code));
}

int versions(int* runtimeVersion, int* driverVersion) {
  const RuntimeError error = HETCCL_RT(RuntimeGetVersion)(runtimeVersion);
  if (error != HETCCL_RT(Success)) return error;
  return HETCCL_RT(DriverGetVersion)(driverVersion);  // 0 without a driver
}

int deviceCount(int* count) { return HETCCL_RT(GetDeviceCount)(count); }

int getDevice(int* device) { return HETCCL_RT(GetDevice)(device); }

int setDevice(int device) { return HETCCL_RT(SetDevice)(device); }

int deviceBusId(int device, char* busId, int length) {
  return HETCCL_RT(DeviceGetPCIBusId)(busId, length, device);
}

int deviceAlloc(void** pointer, size_t bytes) {
  return HETCCL_RT(Malloc)(pointer, bytes);
}

int deviceFree(void* pointer) { return HETCCL_RT(Free)(pointer); }

int hostRegister(void* pointer, size_t bytes) {
  return HETCCL_RT(HostRegister)(
      pointer, bytes,
      HETCCL_RT(HostRegisterPortable) | HETCCL_RT(HostRegisterMapped));
}

int hostUnregister(void* pointer) { return HETCCL_RT(HostUnregister)(pointer); }

int streamCreate(void** stream) {
  RuntimeStream created = nullptr;
  const RuntimeError error =
      HETCCL_RT(StreamCreateWithFlags)(&created, HETCCL_RT(StreamNonBlocking));
  if (error == HETCCL_RT(Success)) *stream = created;
  return error;
}

int streamDestroy(void* stream) {
  return HETCCL_RT(StreamDestroy)(asStream(stream));
}

int streamSynchronize(void* stream) {
  return HETCCL_RT(StreamSynchronize)(asStream(stream));
}

// "Not ready" is an answer, not a failure.
int readiness(RuntimeError error, int* ready) {
  if (error == HETCCL_RT(ErrorNotReady)) {
    *ready = 0;
    return HETCCL_RT(Success);
  }
  if (error == HETCCL_RT(Success)) *ready = 1;
  return error;
}

int streamQuery(void* stream, int* idle) {
  return readiness(HETCCL_RT(StreamQuery)(asStream(stream)), idle);
}

// An invalidated capture is still a capture: the stream stays in capture
// mode until the capture ends, and work queued meanwhile does not run.
int streamIsCapturing(void* stream, int* capturing) {
  HETCCL_RT(StreamCaptureStatus) status = HETCCL_RT(StreamCaptureStatusNone);
  const RuntimeError error =
      HETCCL_RT(StreamIsCapturing)(asStream(stream), &status);
  if (error == HETCCL_RT(Success))
    *capturing = status != HETCCL_RT(StreamCaptureStatusNone);
  return error;
}

int eventCreate(void** event) {
  RuntimeEvent created = nullptr;
  const RuntimeError error =
      HETCCL_RT(EventCreateWithFlags)(&created, HETCCL_RT(EventDisableTiming));
  if (error == HETCCL_RT(Success)) *event = created;
  return error;
}

int timingEventCreate(void** event) {
  RuntimeEvent created = nullptr;
  const RuntimeError error = HETCCL_RT(EventCreate)(&created);
  if (error == HETCCL_RT(Success)) *event = created;
  return error;
}

int eventElapsedMs(void* start, void* end, float* milliseconds) {
  return HETCCL_RT(EventElapsedTime)(milliseconds, asEvent(start),
                                     asEvent(end));
}

int eventDestroy(void* event) {
  return HETCCL_RT(EventDestroy)(asEvent(event));
}

int eventRecord(void* event, void* stream) {
  return HETCCL_RT(EventRecord)(asEvent(event), asStream(stream));
}

int eventQuery(void* event, int* done) {
  return readiness(HETCCL_RT(EventQuery)(asEvent(event)), done);
}

int eventSynchronize(void* event) {
  return HETCCL_RT(EventSynchronize)(asEvent(event));
}

int streamWaitEvent(void* stream, void* event) {
  return HETCCL_RT(StreamWaitEvent)(asStream(stream), asEvent(event), 0);
}

int copyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  return HETCCL_RT(MemcpyAsync)(dst, src, bytes, HETCCL_RT(MemcpyDefault),
                                asStream(stream));
}

int copy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                size_t width, size_t height, void* stream) {
  return HETCCL_RT(Memcpy2DAsync)(dst, dpitch, src, spitch, width, height,
                                  HETCCL_RT(MemcpyDefault), asStream(stream));
}

// Filled by name: many entries share a signature, so an order mistake in
// a positional initialiser would go unnoticed by the compiler.
void fillCommonEntries(hetcclDeviceModuleTable& table) {
  table.abiVersion = HETCCL_DEVICE_MODULE_ABI;
  table.errorString = errorString;
  table.versions = versions;
  table.deviceCount = deviceCount;
  table.getDevice = getDevice;
  table.setDevice = setDevice;
  table.deviceBusId = deviceBusId;
  table.deviceAlloc = deviceAlloc;
  table.deviceFree = deviceFree;
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
  table.copy2DAsync = copy2DAsync;
  table.timingEventCreate = timingEventCreate;
  table.eventElapsedMs = eventElapsedMs;
}

// The whole table: the common entries, and those that differ between the
// runtimes, which Runtime gives as static member functions named and typed
// as the table's entries, with the runtime's name:
//   struct Runtime {
//     static constexpr const char* kName = "cuda";
//     static int memoryKind(const void* pointer, int* kind);
//     ... hostAlloc, hostFree, writeValue64, waitValue64, waitBits64,
//         reduceAsync, lowLatencyCollective, stagedCopy, loadKernels,
//         dmaBufSupported, exportDmaBuf
//   };
template <class Runtime>
hetcclDeviceModuleTable makeTable() {
  hetcclDeviceModuleTable table{};
  fillCommonEntries(table);
  table.runtimeName = Runtime::kName;
  table.memoryKind = Runtime::memoryKind;
  table.hostAlloc = Runtime::hostAlloc;
  table.hostFree = Runtime::hostFree;
  table.writeValue64 = Runtime::writeValue64;
  table.waitValue64 = Runtime::waitValue64;
  table.waitBits64 = Runtime::waitBits64;
  table.reduceAsync = Runtime::reduceAsync;
  table.lowLatencyCollective = Runtime::lowLatencyCollective;
  table.stagedCopy = Runtime::stagedCopy;
  table.loadKernels = Runtime::loadKernels;
  table.dmaBufSupported = Runtime::dmaBufSupported;
  table.exportDmaBuf = Runtime::exportDmaBuf;
  return table;
}

// What the module's hetcclDeviceModule returns: the table, built once.
template <class Runtime>
const hetcclDeviceModuleTable* moduleTable() {
  static const hetcclDeviceModuleTable table = makeTable<Runtime>();
  return &table;
}

}  // namespace
}  // namespace HETCCL_RT_NAMESPACE
}  // namespace hetccl
