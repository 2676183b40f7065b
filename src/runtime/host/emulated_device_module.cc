#include "runtime/host/emulated_device_module.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "runtime/host/host_reduce.h"
#include "runtime/host/host_runtime.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr int kFailed = 1;
// CUDA's cudaErrorInvalidResourceHandle, which a stream or event used
// from the wrong device gets.
constexpr int kInvalidResourceHandle = 400;

// Several devices, and each thread its own current one, as in CUDA. A
// stream and an event belong to the device current when they were made;
// recording an event needs the event's and the stream's device to agree,
// and launching a reduction needs the stream's device current, as a
// kernel launch does. Code that forgets to make its communicator's device
// current fails here as it would on a GPU.
constexpr int kDevices = 8;
thread_local int currentDevice = 0;

// The device of each stream made through the module (the host runtime's
// own streams, which a test's caller uses, belong to none).
class StreamDevices {
 public:
  void add(void* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    devices_[stream] = currentDevice;
  }
  void remove(void* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    devices_.erase(stream);
  }
  // -1 for a stream of no device.
  int deviceOf(void* stream) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = devices_.find(stream);
    return it == devices_.end() ? -1 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<void*, int> devices_;
};

StreamDevices& streamDevices() {
  static StreamDevices devices;
  return devices;
}

// An event: how many records were made, how many the stream reached, and
// when it reached the last one (steady clock, nanoseconds).
struct Event {
  const int device = currentDevice;
  std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> reached{0};
  std::atomic<int64_t> reachedAt{0};
};

int64_t nowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void enqueue(void* stream, StreamTask task) {
  hostRuntimeImpl().enqueue(static_cast<StreamHandle>(stream), std::move(task));
}
Event& eventOf(void* handle) { return *static_cast<Event*>(handle); }

// A wait that never ends is a deadlock in the code under test: fail the
// stream (and so the test) instead of hanging.
template <typename Ready>
void pollUntil(Ready ready, const char* what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline)
      fail(ncclInternalError, "emulated stream stuck waiting for %s", what);
    sched_yield();
  }
}

int allocate(void** pointer, size_t bytes) {
  *pointer = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  return *pointer == nullptr ? kFailed : 0;
}

int release(void* pointer) {
  std::free(pointer);
  return 0;
}

int succeed(void*) { return 0; }

hetcclDeviceModuleTable makeTable() {
  hetcclDeviceModuleTable t{};
  t.abiVersion = HETCCL_DEVICE_MODULE_ABI;
  t.runtimeName = "emulated";
  t.errorString = [](int code) {
    return code == kInvalidResourceHandle
               ? "invalid resource handle (a stream or event of another "
                 "device)"
               : "emulated runtime failure";
  };
  t.versions = [](int* runtime, int* driver) {
    *runtime = *driver = 0;
    return 0;
  };
  t.deviceCount = [](int* count) { return *count = kDevices, 0; };
  t.getDevice = [](int* device) { return *device = currentDevice, 0; };
  t.setDevice = [](int device) {
    if (device < 0 || device >= kDevices) return kFailed;
    currentDevice = device;
    return 0;
  };
  t.deviceBusId = [](int, char* busId, int length) {
    std::strncpy(busId, "emulated", length);
    return 0;
  };
  t.memoryKind = [](const void*, int* kind) {
    return *kind = hetcclMemoryDevice, 0;
  };
  t.deviceAlloc = allocate;
  t.deviceFree = release;
  t.hostAlloc = allocate;
  t.hostFree = release;
  t.hostRegister = [](void*, size_t) { return 0; };
  t.hostUnregister = succeed;
  t.streamCreate = [](void** stream) {
    *stream = hostRuntimeImpl().createStream();
    streamDevices().add(*stream);
    return 0;
  };
  t.streamDestroy = [](void* stream) {
    streamDevices().remove(stream);
    hostRuntimeImpl().destroyStream(static_cast<StreamHandle>(stream));
    return 0;
  };
  t.streamSynchronize = [](void* stream) {
    try {
      hostRuntimeImpl().synchronize(static_cast<StreamHandle>(stream));
      return 0;
    } catch (const Error&) {
      return kFailed;
    }
  };
  t.streamQuery = [](void* stream, int* idle) {
    *idle = hostRuntimeImpl().idle(static_cast<StreamHandle>(stream));
    return 0;
  };
  t.streamIsCapturing = [](void*, int* capturing) { return *capturing = 0, 0; };
  t.eventCreate = [](void** event) { return *event = new Event, 0; };
  t.eventDestroy = [](void* event) {
    delete &eventOf(event);
    return 0;
  };
  t.eventRecord = [](void* handle, void* stream) {
    Event& event = eventOf(handle);
    const int streamDevice = streamDevices().deviceOf(stream);
    if (streamDevice >= 0 && streamDevice != event.device)
      return kInvalidResourceHandle;
    uint64_t generation = ++event.recorded;
    enqueue(stream, [&event, generation] {
      event.reachedAt.store(nowNanoseconds(), std::memory_order_relaxed);
      event.reached.store(generation, std::memory_order_release);
    });
    return 0;
  };
  t.timingEventCreate = t.eventCreate;
  t.eventElapsedMs = [](void* start, void* end, float* milliseconds) {
    Event& from = eventOf(start);
    Event& to = eventOf(end);
    if (from.reached.load() < from.recorded.load() ||
        to.reached.load() < to.recorded.load())
      return kFailed;
    *milliseconds = (to.reachedAt.load() - from.reachedAt.load()) / 1e6f;
    return 0;
  };
  t.eventQuery = [](void* handle, int* done) {
    Event& event = eventOf(handle);
    return *done = event.reached.load() >= event.recorded.load(), 0;
  };
  t.eventSynchronize = [](void* handle) {
    Event& event = eventOf(handle);
    uint64_t generation = event.recorded.load();
    pollUntil([&] { return event.reached.load() >= generation; }, "an event");
    return 0;
  };
  t.streamWaitEvent = [](void* stream, void* handle) {
    Event& event = eventOf(handle);
    uint64_t generation = event.recorded.load();
    enqueue(stream, [&event, generation] {
      pollUntil([&] { return event.reached.load() >= generation; }, "an event");
    });
    return 0;
  };
  t.copyAsync = [](void* dst, const void* src, size_t bytes, void* stream) {
    enqueue(stream, [=] { std::memmove(dst, src, bytes); });
    return 0;
  };
  t.writeValue64 = [](void* stream, uint64_t* address, uint64_t value) {
    enqueue(stream,
            [=] { __atomic_store_n(address, value, __ATOMIC_RELEASE); });
    return 0;
  };
  t.waitValue64 = [](void* stream, const uint64_t* address, uint64_t value) {
    enqueue(stream, [=] {
      pollUntil(
          // CUDA's comparison, cyclic: a word raised to UINT64_MAX
          // releases nothing there, so it must release nothing here.
          [&] {
            return static_cast<int64_t>(
                       __atomic_load_n(address, __ATOMIC_ACQUIRE) - value) >= 0;
          },
          "a counter");
    });
    return 0;
  };
  t.waitBits64 = [](void* stream, const uint64_t* address, uint64_t bits) {
    enqueue(stream, [=] {
      pollUntil(
          [&] {
            return (__atomic_load_n(address, __ATOMIC_ACQUIRE) & bits) != 0;
          },
          "a flag");
    });
    return 0;
  };
  t.reduceAsync = [](const hetcclDeviceReduction* r, void* stream) {
    const int streamDevice = streamDevices().deviceOf(stream);
    if (streamDevice >= 0 && streamDevice != currentDevice)
      return kInvalidResourceHandle;
    hetcclDeviceReduction copy = *r;
    enqueue(stream, [copy] {
      Reduction reduction{static_cast<ncclDataType_t>(copy.dtype),
                          static_cast<ncclRedOp_t>(copy.op)};
      if (copy.applyPreScale) reduction.preScale = &copy.preScale;
      if (copy.applyDivisor) reduction.divisor = copy.divisor;
      hostReduce(copy.dst, copy.srcs, copy.nsrcs, copy.count, reduction);
    });
    return 0;
  };
  t.loadKernels = [] { return 0; };
  return t;
}

}  // namespace

const DeviceModule& emulatedDeviceModule() {
  static const hetcclDeviceModuleTable table = makeTable();
  static const DeviceModule module(table, "emulated device module");
  return module;
}

}  // namespace hetccl
