#include "runtime/host/emulated_device_module.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "runtime/device/low_latency_lines.h"
#include "runtime/host/host_reduce.h"
#include "runtime/host/host_runtime.h"
#include "runtime/runtime_params.h"
#include "util/dtype.h"
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

// A hardware queue of an emulated GPU (HETCCL_EMULATED_QUEUES): its tasks
// run one after another in the order they were enqueued, whichever stream
// they came by, as a GPU's queue runs the work of the streams that share
// it. Each task takes a ticket as it is enqueued and waits for its turn; a
// task that never runs (its stream stopped at a failure) gives its turn up
// as it is destroyed.
class HardwareQueue {
 public:
  // Takes a ticket and enqueues `task` on `stream` as one step, so that
  // tickets follow each stream's order.
  void enqueue(void* stream, StreamTask task) {
    std::lock_guard<std::mutex> lock(enqueueMutex_);
    auto turn = std::make_shared<Turn>(*this, next_++);
    hostRuntimeImpl().enqueue(static_cast<StreamHandle>(stream),
                              [turn, task = std::move(task)] {
                                turn->await();
                                task();
                              });
  }

 private:
  // Held by the task: its turn ends as the task is destroyed, run or not.
  class Turn {
   public:
    Turn(HardwareQueue& queue, uint64_t ticket)
        : queue_(queue), ticket_(ticket) {}
    ~Turn() { queue_.finish(ticket_); }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

    void await() const {
      pollUntil(
          [&] {
            return queue_.served_.load(std::memory_order_acquire) == ticket_;
          },
          "the work before it on its hardware queue "
          "(HETCCL_EMULATED_QUEUES)");
    }

   private:
    HardwareQueue& queue_;
    const uint64_t ticket_;
  };

  void finish(uint64_t ticket) {
    std::lock_guard<std::mutex> lock(finishMutex_);
    finished_.insert(ticket);
    uint64_t served = served_.load(std::memory_order_relaxed);
    while (finished_.erase(served) > 0) ++served;
    served_.store(served, std::memory_order_release);
  }

  std::mutex enqueueMutex_;
  uint64_t next_ = 0;  // the next task's ticket
  std::mutex finishMutex_;
  std::set<uint64_t> finished_;      // tickets done out of turn
  std::atomic<uint64_t> served_{0};  // every ticket below it is done
};

// The device of each stream made through the module, and its hardware
// queue where HETCCL_EMULATED_QUEUES deals them (the host runtime's own
// streams, which a test's caller uses, belong to none).
class StreamDevices {
 public:
  StreamDevices()
      : queuesPerDevice_(static_cast<int>(readInteger(kEmulatedQueues))) {}

  void add(void* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    HardwareQueue* queue = nullptr;
    if (queuesPerDevice_ > 0) {
      auto& queues = queues_[currentDevice];
      if (queues.empty())
        for (int q = 0; q < queuesPerDevice_; ++q)
          queues.push_back(std::make_unique<HardwareQueue>());
      queue = queues[dealt_[currentDevice]++ % queuesPerDevice_].get();
    }
    streams_[stream] = {currentDevice, queue};
  }
  void remove(void* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.erase(stream);
  }
  // -1 for a stream of no device.
  int deviceOf(void* stream) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = streams_.find(stream);
    return it == streams_.end() ? -1 : it->second.device;
  }
  // Null where the stream has a queue of its own.
  HardwareQueue* queueOf(void* stream) const {
    if (queuesPerDevice_ == 0) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = streams_.find(stream);
    return it == streams_.end() ? nullptr : it->second.queue;
  }

 private:
  struct Stream {
    int device;
    HardwareQueue* queue;
  };
  const int queuesPerDevice_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Stream> streams_;
  std::vector<std::unique_ptr<HardwareQueue>> queues_[kDevices];
  uint64_t dealt_[kDevices] = {};
};

StreamDevices& streamDevices() {
  static StreamDevices devices;
  return devices;
}

// HETCCL_EMULATED_CAPTURES=1: every other launch on a stream is said to
// be captured into a graph, and its work runs at once, as a capture
// replayed once right away would. So CI runs the path that graph replays
// take (the streams joined through events, a script that the stream
// starts, pieces numbered per launch) without a GPU. Each executor asks
// once per launch, so the answer alternates per stream, for a stream's
// first kLaunches only: a graph's launches keep their scripts for as long
// as the communicator lives, which holds at most 4096 of them.
class PretendCaptures {
 public:
  bool nextLaunchCaptured(void* stream) {
    constexpr uint64_t kLaunches = 2048;
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t launch = asked_[stream]++;
    return launch < kLaunches && launch % 2 == 1;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, uint64_t> asked_;
};

int streamIsCapturing(void* stream, int* capturing) {
  static PretendCaptures pretend;
  *capturing =
      readFlag(kEmulatedCaptures) && pretend.nextLaunchCaptured(stream);
  return 0;
}

int64_t nowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// reachedAt of a record that its stream skipped: the stream stopped at a
// failed task before it (AfterFailure::Stop), so it is never reached.
constexpr int64_t kNeverReached = -1;

// One record of an event, reached once its stream got to it: when (steady
// clock, nanoseconds), 0 before, or kNeverReached.
struct EventRecord {
  std::atomic<int64_t> reachedAt{0};
};

// What the record's stream runs: it reaches the record. Destroyed unrun
// (its stream stopped at a failure), it marks the record never reached, so
// that a wait for it does not last until it is declared stuck.
class RecordReach {
 public:
  explicit RecordReach(std::shared_ptr<EventRecord> record)
      : record_(std::move(record)) {}
  ~RecordReach() {
    int64_t pending = 0;
    record_->reachedAt.compare_exchange_strong(pending, kNeverReached);
  }
  RecordReach(const RecordReach&) = delete;
  RecordReach& operator=(const RecordReach&) = delete;

  void reach() {
    record_->reachedAt.store(std::max<int64_t>(nowNanoseconds(), 1),
                             std::memory_order_release);
  }

 private:
  const std::shared_ptr<EventRecord> record_;
};

// An event. As in CUDA, a wait, a query or a synchronisation is about its
// latest record when it is called (an event recorded on two streams in
// turn may see them reached in either order).
struct Event {
  const int device = currentDevice;
  std::mutex mutex;
  std::shared_ptr<EventRecord> latest;  // null before the first record

  std::shared_ptr<EventRecord> current() {
    std::lock_guard<std::mutex> lock(mutex);
    return latest;
  }
};

// An event never recorded counts as reached, as in CUDA.
bool reached(const std::shared_ptr<EventRecord>& record) {
  return !record || record->reachedAt.load(std::memory_order_acquire) > 0;
}

bool neverReached(const std::shared_ptr<EventRecord>& record) {
  return record &&
         record->reachedAt.load(std::memory_order_acquire) == kNeverReached;
}

void enqueue(void* stream, StreamTask task) {
  if (HardwareQueue* queue = streamDevices().queueOf(stream))
    return queue->enqueue(stream, std::move(task));
  hostRuntimeImpl().enqueue(static_cast<StreamHandle>(stream), std::move(task));
}
Event& eventOf(void* handle) { return *static_cast<Event*>(handle); }

// A wait that ended because its rank released it (abort, destroy, revoke)
// rather than because its peer got there: what follows runs on undefined
// data. A CUDA stream cannot say so; the emulated one fails, so that the
// tests see an operation that did not complete as failed.
[[noreturn]] void failReleased(const char* what) {
  throw ReleasedWait(
      ncclRemoteError,
      format("a wait for %s was released by an abort, destroy or revoke of "
             "its communicator before the peer got there: the operation's "
             "results are undefined",
             what));
}

// Waits for `record`; fails if its stream stopped at a failure before it.
// A GPU stream would wait here until its rank's abort let that stream run
// on; the emulated one never runs on, so the waiting stream fails at once
// and stops too: nothing behind either failure completes.
void awaitRecord(const std::shared_ptr<EventRecord>& record) {
  pollUntil([&] { return reached(record) || neverReached(record); },
            "an event");
  if (neverReached(record))
    fail(ncclRemoteError,
         "a wait for an event whose stream failed before reaching it: the "
         "operation did not complete");
}

bool released(uint64_t word) {
  return (word & HETCCL_DEVICE_WAIT_RELEASED) != 0;
}

// A stream's wait until *address >= value, as CUDA compares (cyclically:
// a word raised to UINT64_MAX releases nothing there, so it must release
// nothing here).
void awaitCounter(const uint64_t* address, uint64_t value) {
  uint64_t word = 0;
  pollUntil(
      [&] {
        word = __atomic_load_n(address, __ATOMIC_ACQUIRE);
        return static_cast<int64_t>(word - value) >= 0;
      },
      "a counter");
  if (released(word) && !released(value)) failReleased("a counter");
}

// As the staged copy's kernel stores them: each aligned 8-byte word whole,
// for the threads that read words of dst meanwhile (a ring's counters).
void copyWholeWords(void* dst, const void* src, size_t bytes) {
  constexpr size_t kWord = sizeof(uint64_t);
  if (uintptr_t(dst) % kWord != 0 || uintptr_t(src) % kWord != 0 ||
      bytes % kWord != 0) {
    std::memmove(dst, src, bytes);
    return;
  }
  auto* to = static_cast<uint64_t*>(dst);
  const auto* from = static_cast<const uint64_t*>(src);
  for (size_t i = 0; i < bytes / kWord; ++i)
    __atomic_store_n(to + i, from[i], __ATOMIC_RELAXED);
}

Reduction reductionOf(const hetcclDeviceReduction& r) {
  Reduction reduction{static_cast<ncclDataType_t>(r.dtype),
                      static_cast<ncclRedOp_t>(r.op)};
  if (r.applyPreScale) reduction.preScale = &r.preScale;
  if (r.applyDivisor) reduction.divisor = r.divisor;
  return reduction;
}

// A low-latency collective as its kernel runs it, in the same lines
// (runtime/device/low_latency_lines.h), by one thread: post every unit of
// the input, wait for every unit of the inputs it reads, then reduce in
// rank order or copy, and count the operation.
class EmulatedLowLatencyCollective {
 public:
  explicit EmulatedLowLatencyCollective(
      const hetcclDeviceLowLatencyCollective& c)
      : c_(c),
        partBytes_(c.reduction.count *
                   dtypeSize(static_cast<ncclDataType_t>(c.reduction.dtype))),
        postedBytes_(c.kind == hetcclLowLatencyReduceScatter
                         ? c.nranks * partBytes_
                         : partBytes_),
        units_(lowlatency::unitsOf(postedBytes_)),
        done_(c.counts[0]) {}

  void run() {
    std::vector<std::vector<uint64_t>> inputs(c_.nranks);
    for (int r = 0; r < c_.nranks; ++r) inputs[r].resize(units_);
    // A broadcast's other ranks post a token as unit 0, and every rank
    // waits for every other rank's unit 0 at least (see runLowLatency in
    // device_kernels.h).
    const bool token =
        c_.kind == hetcclLowLatencyBroadcast && c_.rank != c_.root;
    if (!token)
      std::memcpy(inputs[c_.rank].data(), c_.reduction.srcs[0], postedBytes_);
    post(inputs[c_.rank], token ? 1 : units_);
    for (int r = 0; r < c_.nranks; ++r) {
      const bool whole = c_.kind != hetcclLowLatencyBroadcast || r == c_.root;
      if (r != c_.rank) await(r, inputs[r], whole ? units_ : 1);
    }
    finish(inputs);
    for (int b = 0; b < HETCCL_DEVICE_LL_BLOCKS; ++b) c_.counts[b] = done_ + 1;
  }

 private:
  void finish(const std::vector<std::vector<uint64_t>>& inputs) {
    char* dst = static_cast<char*>(c_.reduction.dst);
    switch (c_.kind) {
      case hetcclLowLatencyAllReduce:
      case hetcclLowLatencyReduceScatter: {
        const size_t offset =
            c_.kind == hetcclLowLatencyReduceScatter ? c_.rank * partBytes_ : 0;
        const void* sources[HETCCL_DEVICE_MAX_SOURCES];
        for (int r = 0; r < c_.nranks; ++r)
          sources[r] = reinterpret_cast<const char*>(inputs[r].data()) + offset;
        hostReduce(dst, sources, c_.nranks, c_.reduction.count,
                   reductionOf(c_.reduction));
        break;
      }
      case hetcclLowLatencyAllGather:
        for (int r = 0; r < c_.nranks; ++r)
          std::memmove(dst + r * partBytes_, inputs[r].data(), partBytes_);
        break;
      default:
        std::memmove(dst, inputs[c_.root].data(), partBytes_);
        break;
    }
  }

  uint64_t* lines(int owner) const {
    return c_.areas[owner] + lowlatency::halfOf(done_) * c_.halfLines;
  }

  // Units [0, units) of `input`.
  void post(const std::vector<uint64_t>& input, size_t units) {
    const uint32_t flag = lowlatency::flagOf(done_);
    uint64_t* own = lines(c_.rank);
    for (size_t u = 0; u < units; ++u) {
      __atomic_store_n(&own[2 * u],
                       lowlatency::makeLine(uint32_t(input[u]), flag),
                       __ATOMIC_RELEASE);
      __atomic_store_n(&own[2 * u + 1],
                       lowlatency::makeLine(uint32_t(input[u] >> 32), flag),
                       __ATOMIC_RELEASE);
    }
  }

  // Units [0, units) of `owner`'s input; fails once the waits are
  // released.
  void await(int owner, std::vector<uint64_t>& input, size_t units) {
    const uint32_t flag = lowlatency::flagOf(done_);
    const uint64_t* from = lines(owner);
    for (size_t u = 0; u < units; ++u) {
      uint32_t halves[2];
      for (int h = 0; h < 2; ++h) {
        uint64_t line = 0;
        bool released = false;
        pollUntil(
            [&] {
              line = __atomic_load_n(&from[2 * u + h], __ATOMIC_ACQUIRE);
              released = __atomic_load_n(c_.release, __ATOMIC_ACQUIRE) != 0;
              return lowlatency::flagOfLine(line) == flag || released;
            },
            "another rank's low-latency lines");
        if (lowlatency::flagOfLine(line) != flag)
          failReleased("another rank's low-latency lines");
        halves[h] = lowlatency::dataOfLine(line);
      }
      input[u] = uint64_t(halves[1]) << 32 | halves[0];
    }
  }

  const hetcclDeviceLowLatencyCollective c_;
  const size_t partBytes_;
  const size_t postedBytes_;
  const size_t units_;
  const uint64_t done_;
};

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
  // Each process's emulated devices are its own (host memory).
  t.deviceBusId = [](int device, char* busId, int length) {
    std::snprintf(busId, length, "emulated:%d:%d", int(getpid()), device);
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
  // A GPU stream stays at a kernel that failed to complete until its
  // rank's abort: nothing queued behind a failed task may run as if it had
  // succeeded.
  t.streamCreate = [](void** stream) {
    *stream = hostRuntimeImpl().createStream(AfterFailure::Stop);
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
  t.streamIsCapturing = streamIsCapturing;
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
    auto record = std::make_shared<EventRecord>();
    {
      std::lock_guard<std::mutex> lock(event.mutex);
      event.latest = record;
    }
    enqueue(stream, [reach = std::make_shared<RecordReach>(record)] {
      reach->reach();
    });
    return 0;
  };
  t.timingEventCreate = t.eventCreate;
  t.eventElapsedMs = [](void* start, void* end, float* milliseconds) {
    const auto from = eventOf(start).current();
    const auto to = eventOf(end).current();
    if (!from || !to || !reached(from) || !reached(to)) return kFailed;
    *milliseconds = (to->reachedAt.load() - from->reachedAt.load()) / 1e6f;
    return 0;
  };
  t.eventQuery = [](void* handle, int* done) {
    const auto record = eventOf(handle).current();
    if (neverReached(record)) return kFailed;
    return *done = reached(record), 0;
  };
  t.eventSynchronize = [](void* handle) {
    try {
      awaitRecord(eventOf(handle).current());
      return 0;
    } catch (const Error&) {
      return kFailed;
    }
  };
  t.streamWaitEvent = [](void* stream, void* handle) {
    const auto record = eventOf(handle).current();
    enqueue(stream, [record] { awaitRecord(record); });
    return 0;
  };
  t.copyAsync = [](void* dst, const void* src, size_t bytes, void* stream) {
    enqueue(stream, [=] { std::memmove(dst, src, bytes); });
    return 0;
  };
  t.copy2DAsync = [](void* dst, size_t dpitch, const void* src, size_t spitch,
                     size_t width, size_t height, void* stream) {
    enqueue(stream, [=] {
      for (size_t row = 0; row < height; ++row)
        std::memmove(static_cast<char*>(dst) + row * dpitch,
                     static_cast<const char*>(src) + row * spitch, width);
    });
    return 0;
  };
  t.writeValue64 = [](void* stream, uint64_t* address, uint64_t value) {
    enqueue(stream,
            [=] { __atomic_store_n(address, value, __ATOMIC_RELEASE); });
    return 0;
  };
  t.waitValue64 = [](void* stream, const uint64_t* address, uint64_t value) {
    enqueue(stream, [=] { awaitCounter(address, value); });
    return 0;
  };
  t.waitBits64 = [](void* stream, const uint64_t* address, uint64_t bits) {
    enqueue(stream, [=] {
      uint64_t word = 0;
      pollUntil(
          [&] {
            word = __atomic_load_n(address, __ATOMIC_ACQUIRE);
            return (word & bits) != 0;
          },
          "a flag");
      if (released(word)) failReleased("a flag");
    });
    return 0;
  };
  t.reduceAsync = [](const hetcclDeviceReduction* r, void* stream) {
    const int streamDevice = streamDevices().deviceOf(stream);
    if (streamDevice >= 0 && streamDevice != currentDevice)
      return kInvalidResourceHandle;
    hetcclDeviceReduction copy = *r;
    enqueue(stream, [copy] {
      hostReduce(copy.dst, copy.srcs, copy.nsrcs, copy.count,
                 reductionOf(copy));
    });
    return 0;
  };
  t.lowLatencyCollective = [](const hetcclDeviceLowLatencyCollective* c,
                              void* stream) {
    const int streamDevice = streamDevices().deviceOf(stream);
    if (streamDevice >= 0 && streamDevice != currentDevice)
      return kInvalidResourceHandle;
    if (c == nullptr || c->nranks < 2 ||
        c->nranks > HETCCL_DEVICE_MAX_SOURCES || c->reduction.nsrcs != 1)
      return kFailed;
    const size_t parts =
        c->kind == hetcclLowLatencyReduceScatter ? size_t(c->nranks) : 1;
    const size_t bytes =
        parts * c->reduction.count *
        dtypeSize(static_cast<ncclDataType_t>(c->reduction.dtype));
    if (c->halfLines < lowlatency::linesFor(bytes)) return kFailed;
    if (c->reduction.count == 0) return 0;
    hetcclDeviceLowLatencyCollective copy = *c;
    enqueue(stream, [copy] { EmulatedLowLatencyCollective(copy).run(); });
    return 0;
  };
  t.stagedCopy = [](const hetcclDeviceStagedCopy* c, void* stream) {
    if (c == nullptr ||
        (c->bytes > 0 && (c->dst == nullptr || c->src == nullptr)))
      return kFailed;
    const hetcclDeviceStagedCopy copy = *c;
    enqueue(stream, [copy] {
      if (copy.waitWord != nullptr) awaitCounter(copy.waitWord, copy.waitValue);
      copyWholeWords(copy.dst, copy.src, copy.bytes);
      if (copy.signalWord != nullptr)
        __atomic_store_n(copy.signalWord, copy.signalValue, __ATOMIC_RELEASE);
    });
    return 0;
  };
  t.loadKernels = [] { return 0; };
  // Emulated devices' memory is the host's: nothing to export.
  t.dmaBufSupported = [](int* supported) {
    *supported = 0;
    return 0;
  };
  t.exportDmaBuf = [](const void*, int*, uint64_t*) { return kFailed; };
  return t;
}

}  // namespace

const DeviceModule& emulatedDeviceModule() {
  static const hetcclDeviceModuleTable table = makeTable();
  static const DeviceModule module(table, "emulated device module");
  return module;
}

}  // namespace hetccl
