#include "runtime/device/current_device.h"

#include "util/log.h"

namespace hetccl {

CurrentDevice::CurrentDevice(const DeviceModule& module, int device)
    : module_(module) {
  module_.check(module_.api().getDevice(&previous_),
                "asking for the current device");
  if (previous_ == device) return;
  module_.check(module_.api().setDevice(device),
                "making the communicator's device current");
  changed_ = true;
}

CurrentDevice::~CurrentDevice() {
  if (changed_ && module_.api().setDevice(previous_) != 0)
    LOG_WARN(kLogInit, "could not make device %d current again", previous_);
}

}  // namespace hetccl
