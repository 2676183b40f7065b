// The host side of a staged launch that a stream starts itself: what a
// CUDA graph needs to replay a launch that crosses domains through the
// staging proxy. Enqueued in a capture, the launch's GPU work is recorded
// once with fixed counter values, and the proxy must move its pieces at
// every replay, when the replay reaches them, not when the launch was
// made. So the launch's pieces are numbered from 0 on each ring and kept
// here, and two host functions bracket the launch's GPU work:
//   start: for every ring the launch uses, keep its counters' value (the
//          ring is idle: every earlier launch is done) and set them to 0;
//          then hand the pieces to the proxy ahead of any waiting there
//          (those belong to later launches, held back by their gate);
//   end:   once the launch's last piece is through, put the counters back,
//          so the launches enqueued outside the graph find them where
//          they left them.
// After a failure both release the ring's waits instead, so a replay of a
// failed communicator runs through (its results undefined, as after any
// failure) rather than waiting for a proxy that stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/gpu/staging_proxy.h"
#include "engine/gpu/staging_ring.h"
#include "util/abort_signal.h"

namespace hetccl {

class StagedLaunchScript {
 public:
  StagedLaunchScript(StagingProxy& proxy, std::shared_ptr<AbortSignal> abort)
      : proxy_(proxy), abort_(std::move(abort)) {}

  // A piece of `ring`, numbered from 0 for this launch.
  void add(const StagingRing& ring, const StagingProxy::Job& job);
  // The launch is enqueued: no piece comes after this. A stream may reach
  // start() while its launch is still being enqueued (outside a capture),
  // and start() waits for this.
  void seal() { sealed_.store(true, std::memory_order_release); }

  // Host functions (launchHostFunc) with the script as their argument.
  static void start(void* script);
  static void end(void* script);

  // How many times end() ran: a launch made outside a capture runs once.
  uint64_t ends() const { return __atomic_load_n(&ends_, __ATOMIC_ACQUIRE); }

 private:
  struct RingState {
    const StagingRing* ring;
    uint64_t keptCounters;
  };

  void releaseRings() const;

  StagingProxy& proxy_;
  const std::shared_ptr<AbortSignal> abort_;
  std::vector<StagingProxy::Job> jobs_;
  std::vector<RingState> rings_;
  std::atomic<bool> sealed_{false};
  uint64_t ends_ = 0;
};

}  // namespace hetccl
