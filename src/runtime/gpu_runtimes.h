// Every GPU runtime HetCCL drives, one row each: how to find the program's
// own copy of it, which device module drives its buffers and streams, what
// memory its buffers are and what its graphs can capture. A new GPU vendor
// is one row here, its module (runtime/<name>/, built as
// libhetccl-<name>.so) and its domain back-end (domain/<vendor>/).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/loaded_runtime.h"
#include "runtime/memory_kind.h"
#include "runtime/runtime.h"
#include "runtime/runtime_params.h"

namespace hetccl {

struct GpuRuntime {
  RuntimeKind kind;
  const char* name;   // "cuda": the prefix of its functions (cudaGetDevice)
  const char* label;  // "CUDA", for messages
  // The program's runtime library, newest first. HetCCL never loads it: a
  // process that has none loaded is not a rank of this runtime.
  RuntimeSonames sonames;
  const ParamSpec* moduleParam;  // where to find the module instead
  const char* moduleFile;        // the device module, beside libhetccl.so
  MemoryKind memory;             // what its device buffers are
  // Launches through the staging proxy can be captured in a graph: the
  // stream memory operations that start the proxy's part at each replay
  // have been run with this runtime.
  bool capturesStagedLaunches;
};

// In the order they are asked for a current device.
const std::vector<GpuRuntime>& gpuRuntimes();
// The row of `kind`; ncclInternalError for the host, which has none.
const GpuRuntime& gpuRuntime(RuntimeKind kind);
// The row whose `name` is `name` (a device module's runtimeName); null for
// the emulated module, whose "device" memory is the host's.
const GpuRuntime* findGpuRuntime(const std::string& name);

// The device current on the calling thread in the program's copy of
// `runtime`; nothing when it is not loaded, has no device or fails, or
// HETCCL_FORCE_CPU=1.
std::optional<int> currentDevice(const GpuRuntime& runtime);
// How many devices the program's copy sees; nothing without one.
std::optional<int> deviceCount(const GpuRuntime& runtime);
// Makes `device` current on the calling thread (a background init runs on
// a thread of its own, where the user's choice of device does not hold);
// ncclUnhandledCudaError when it cannot.
void setCurrentDevice(const GpuRuntime& runtime, int device);

}  // namespace hetccl
