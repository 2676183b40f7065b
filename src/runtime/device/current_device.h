// The calling thread's current device, made another for a while: every
// device call for a communicator runs with that communicator's device
// current, and the caller finds its own current again afterwards (NCCL
// guarantees this, and programs that drive several devices depend on it).
#pragma once

#include "runtime/device/device_module_loader.h"

namespace hetccl {

class CurrentDevice {
 public:
  // Makes `device` current on this thread. Throws ncclUnhandledCudaError
  // when the runtime refuses.
  CurrentDevice(const DeviceModule& module, int device);
  // Makes the device that was current before current again.
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  const DeviceModule& module_;
  int previous_ = -1;
  bool changed_ = false;
};

}  // namespace hetccl
