#include "runtime/device/device_resources.h"

#include "util/log.h"

namespace hetccl {
namespace {

// Release paths run in destructors, which must not throw: a failure there
// (a context already torn down at exit) is only worth a warning.
void warnIfFailed(const DeviceModule& module, int code, const char* what) {
  if (code != 0)
    LOG_WARN(kLogAlloc, "%s failed: %s", what, module.api().errorString(code));
}

}  // namespace

PinnedHostMemory::PinnedHostMemory(const DeviceModule& module, size_t bytes)
    : module_(&module), bytes_(bytes) {
  module.check(module.api().hostAlloc(&pointer_, bytes ? bytes : 1),
               "allocating pinned host memory");
}

PinnedHostMemory::~PinnedHostMemory() {
  if (pointer_ != nullptr)
    warnIfFailed(*module_, module_->api().hostFree(pointer_),
                 "freeing pinned host memory");
}

DeviceMemory::DeviceMemory(const DeviceModule& module, size_t bytes)
    : module_(module) {
  module.check(module.api().deviceAlloc(&pointer_, bytes ? bytes : 1),
               "allocating device memory");
}

DeviceMemory::~DeviceMemory() {
  warnIfFailed(module_, module_.api().deviceFree(pointer_),
               "freeing device memory");
}

HostRegistration::HostRegistration(const DeviceModule& module, void* pointer,
                                   size_t bytes)
    : module_(module), pointer_(pointer) {
  module.check(module.api().hostRegister(pointer, bytes),
               "registering host memory with the GPU runtime");
}

HostRegistration::~HostRegistration() {
  warnIfFailed(module_, module_.api().hostUnregister(pointer_),
               "unregistering host memory");
}

DeviceEvent::DeviceEvent(const DeviceModule& module, Timing timing)
    : module_(module) {
  const auto& api = module.api();
  module.check(timing == Timing::On ? api.timingEventCreate(&event_)
                                    : api.eventCreate(&event_),
               "creating an event");
}

DeviceEvent::~DeviceEvent() {
  warnIfFailed(module_, module_.api().eventDestroy(event_),
               "destroying an event");
}

void DeviceEvent::record(void* stream) {
  module_.check(module_.api().eventRecord(event_, stream),
                "recording an event");
}

bool DeviceEvent::done() const {
  int done = 0;
  module_.check(module_.api().eventQuery(event_, &done), "querying an event");
  return done != 0;
}

void DeviceEvent::synchronize() const {
  module_.check(module_.api().eventSynchronize(event_), "waiting for an event");
}

float DeviceEvent::millisecondsSince(const DeviceEvent& earlier) const {
  float milliseconds = 0;
  module_.check(
      module_.api().eventElapsedMs(earlier.event_, event_, &milliseconds),
      "timing between two events");
  return milliseconds;
}

DeviceStream::DeviceStream(const DeviceModule& module) : module_(module) {
  module.check(module.api().streamCreate(&stream_), "creating a stream");
}

DeviceStream::~DeviceStream() {
  warnIfFailed(module_, module_.api().streamDestroy(stream_),
               "destroying a stream");
}

}  // namespace hetccl
