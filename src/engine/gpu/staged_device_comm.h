// GPU buffers in a heterogeneous communicator. All-reduce, reduce-scatter,
// all-gather, broadcast and all-to-all among GPU ranks of one host take the
// stream-driven path of DeviceShmCollectives when there is one; everything
// else (grouped ops, rooted reductions, send/recv, ranks on several hosts)
// goes through pinned host memory:
// on the caller's stream the inputs are copied to staging and a flag is
// raised; a proxy thread waits for the flag, runs the host plan on the
// staging, and raises a second flag that the stream waits for before it
// copies the results back. The launch only enqueues: the caller's thread
// never waits for the GPU (except to reuse staging still being copied
// from, several launches later).
#pragma once

#include <array>
#include <memory>
#include <mutex>

#include "engine/gpu/device_shm_collectives.h"
#include "runtime/device/device_resources.h"
#include "runtime/host/host_stream.h"
#include "util/abort_signal.h"
#include "util/inflight_tracker.h"
#include "vendor/executor.h"

namespace hetccl {

class StagedDeviceComm : public Executor {
 public:
  // `hostComm` runs the ops on host memory (the heterogeneous executor);
  // `abort` is the communicator's, raised by any failure here.
  StagedDeviceComm(std::shared_ptr<Executor> hostComm,
                   const DeviceModule& module, int device, int rank, int nranks,
                   std::shared_ptr<AbortSignal> abort, double timeoutSeconds,
                   std::unique_ptr<DeviceShmCollectives> directCollectives);
  ~StagedDeviceComm() override;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override;
  // Lets every stream waiting for the proxy go on (with undefined
  // results: the communicator has failed).
  void abort() override;

 private:
  // Staging of one launch, reused once the GPU has copied out of it.
  struct Slot {
    PinnedHostMemory memory;
    std::unique_ptr<DeviceEvent> copiedOut;
    bool inUse = false;
  };
  // Words the stream and the proxy signal each other with: launch
  // sequence numbers, only ever increasing.
  struct Flags {
    uint64_t inputsStaged;  // written by the stream, read by the proxy
    uint64_t hostDone;      // written by the proxy, awaited by the stream
  };

  void checkNotCapturing(StreamHandle stream) const;
  Slot& slotFor(uint64_t sequence, size_t bytes);
  void enqueueLaunch(const std::vector<Op>& ops, StreamHandle stream);
  void runOnHost(uint64_t sequence, const std::vector<Op>& hostOps);
  void signalHostDone(uint64_t value);

  static constexpr size_t kSlots = 4;

  std::shared_ptr<Executor> hostComm_;
  const DeviceModule& module_;
  const int device_;  // made current before anything is created on it
  const int rank_;
  const int nranks_;
  std::shared_ptr<AbortSignal> abort_;
  const double timeoutSeconds_;
  PinnedHostMemory flagMemory_;
  Flags* flags_;
  std::array<Slot, kSlots> slots_;
  std::unique_ptr<DeviceShmCollectives> directCollectives_;  // may be null
  std::mutex launchMutex_;
  uint64_t launched_ = 0;
  InflightTracker proxyTasks_;  // what drain() waits for on the proxy
  HostStream proxy_;            // last: its thread stops before the rest goes
};

}  // namespace hetccl
