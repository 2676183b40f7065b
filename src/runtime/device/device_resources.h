// Owners of a device module's handles: each is released when its owner
// goes away, with the module that made it.
#pragma once

#include <cstddef>
#include <utility>

#include "runtime/device/device_module_loader.h"

namespace hetccl {

// Pinned host memory, mapped for every device.
class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;
  PinnedHostMemory(const DeviceModule& module, size_t bytes);
  ~PinnedHostMemory();
  PinnedHostMemory(PinnedHostMemory&& other) noexcept { swap(other); }
  PinnedHostMemory& operator=(PinnedHostMemory&& other) noexcept {
    swap(other);
    return *this;
  }

  char* data() const { return static_cast<char*>(pointer_); }
  size_t size() const { return bytes_; }

 private:
  void swap(PinnedHostMemory& other) noexcept {
    std::swap(module_, other.module_);
    std::swap(pointer_, other.pointer_);
    std::swap(bytes_, other.bytes_);
  }

  const DeviceModule* module_ = nullptr;
  void* pointer_ = nullptr;
  size_t bytes_ = 0;
};

// Device memory of the current device.
class DeviceMemory {
 public:
  DeviceMemory(const DeviceModule& module, size_t bytes);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  char* data() const { return static_cast<char*>(pointer_); }

 private:
  const DeviceModule& module_;
  void* pointer_ = nullptr;
};

// Existing host memory (a shared segment) pinned and mapped while this
// lives.
class HostRegistration {
 public:
  HostRegistration(const DeviceModule& module, void* pointer, size_t bytes);
  ~HostRegistration();
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

 private:
  const DeviceModule& module_;
  void* pointer_;
};

// An event for ordering and completion (no timing).
class DeviceEvent {
 public:
  // A timed event also keeps when the stream reached it.
  enum class Timing { Off, On };
  explicit DeviceEvent(const DeviceModule& module, Timing timing = Timing::Off);
  ~DeviceEvent();
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;

  void record(void* stream);
  bool done() const;
  void synchronize() const;
  // Milliseconds from `earlier` to this event, both timed and reached.
  float millisecondsSince(const DeviceEvent& earlier) const;
  void* handle() const { return event_; }

 private:
  const DeviceModule& module_;
  void* event_ = nullptr;
};

// A stream of HetCCL's own (non-blocking with respect to the legacy
// default stream).
class DeviceStream {
 public:
  explicit DeviceStream(const DeviceModule& module);
  ~DeviceStream();
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;

  void* handle() const { return stream_; }

 private:
  const DeviceModule& module_;
  void* stream_ = nullptr;
};

}  // namespace hetccl
