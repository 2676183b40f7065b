// Enforces HETCCL_TIMEOUT on launches whose streams wait only for their
// peers' streams (the stream-driven path among GPUs of one host): such a
// stream waits on host words that only peers write, so a peer that stops
// without exiting (hung, frozen, stopped) would hold it forever, and no
// host thread would notice. The caller's stream marks each launch in two
// pinned words, when it reaches the launch and when it is past it; a
// thread of this watch reads them (it never calls the GPU runtime) and
// reports a launch that the stream reached but did not get past within
// the timeout, or that stalls while a peer process is known to be gone
// (the watchdog's pidfds: the streams cannot see that). A launch that has
// waited HETCCL_STALL_WARN is also said, before any timeout, and again
// each time its wait has doubled.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "util/error.h"

namespace hetccl {

class LaunchWatch {
 public:
  // `reached` and `passed` hold launch sequence numbers, written by the
  // streams; `timeoutSeconds` 0 waits forever for live peers;
  // `throwIfPeerLost(launch)` throws ncclRemoteError naming a peer that
  // launch `launch` lost (0: between launches, a peer lost in any way but
  // a clean departure); `onStall` runs on the watch's thread, once.
  // `onLongWait(launch, seconds)` runs there once a launch has waited
  // `stallWarnSeconds` (0: never), then each time its wait has doubled.
  LaunchWatch(const uint64_t* reached, const uint64_t* passed,
              double timeoutSeconds,
              std::function<void(uint64_t launch)> throwIfPeerLost,
              std::function<void(const Error&)> onStall,
              double stallWarnSeconds = 0,
              std::function<void(uint64_t launch, double seconds)> onLongWait =
                  nullptr);
  ~LaunchWatch();
  LaunchWatch(const LaunchWatch&) = delete;
  LaunchWatch& operator=(const LaunchWatch&) = delete;

  // From now on a lost peer is reported also when no marked launch is in
  // progress: a CUDA graph's replay of a captured launch (which carries no
  // marks) may be waiting for it. A replay held by a peer that is stuck
  // but alive is not timed.
  void watchBetweenLaunches() {
    betweenLaunches_.store(true, std::memory_order_relaxed);
  }

 private:
  void run();
  // With watchBetweenLaunches: the error naming a lost peer, if any.
  std::optional<Error> lostPeer() const;
  // The error to report for launch `launch`, stalled for `seconds`.
  std::optional<Error> verdict(uint64_t launch, double seconds) const;

  const uint64_t* reached_;
  const uint64_t* passed_;
  const double timeoutSeconds_;
  std::function<void(uint64_t)> throwIfPeerLost_;
  std::function<void(const Error&)> onStall_;
  const double stallWarnSeconds_;
  std::function<void(uint64_t, double)> onLongWait_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> betweenLaunches_{false};
  std::thread thread_;
};

}  // namespace hetccl
