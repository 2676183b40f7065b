// Loads a device-runtime module (libhetccl-cuda.so, libhetccl-hip.so) and
// turns its return codes into hetccl::Error with the runtime's message.
#pragma once

#include <string>

#include "runtime/device/device_module.h"
#include "runtime/runtime.h"
#include "util/shared_library.h"

namespace hetccl {

class DeviceModule {
 public:
  // Opens the module at `path` and checks its table. Throws
  // ncclSystemError when it cannot be loaded or is of another ABI.
  explicit DeviceModule(const std::string& path);
  // A table the program itself provides (tests emulate a GPU runtime on
  // the host with one); `name` stands in for the path in messages.
  DeviceModule(const hetcclDeviceModuleTable& table, std::string name);

  const hetcclDeviceModuleTable& api() const { return *table_; }
  const std::string& path() const { return path_; }
  const char* runtimeName() const { return table_->runtimeName; }

  // Throws ncclUnhandledCudaError naming `what` and the runtime's message
  // when `code` is not success.
  void check(int code, const char* what) const;

 private:
  SharedLibrary library_;
  std::string path_;
  const hetcclDeviceModuleTable* table_ = nullptr;
};

// The module of `runtime` (Cuda or Hip) for this process, loaded on first
// use from HETCCL_CUDA_MODULE / HETCCL_HIP_MODULE, else beside the HetCCL
// library that is running, else through the loader's search path.
DeviceModule& deviceModule(RuntimeKind runtime);

}  // namespace hetccl
