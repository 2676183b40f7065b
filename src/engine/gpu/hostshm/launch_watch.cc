#include "engine/gpu/hostshm/launch_watch.h"

#include <chrono>

namespace hetccl {
namespace {

// How often the words are read: a small share of any timeout worth
// setting, and no load worth measuring.
constexpr auto kPollInterval = std::chrono::milliseconds(50);
// A launch stalled this long is checked against the peers' liveness: a
// peer that left after its last operation harms only launches that need
// it, and those stall.
constexpr double kStallSeconds = 0.5;

uint64_t load(const uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

}  // namespace

LaunchWatch::LaunchWatch(const uint64_t* reached, const uint64_t* passed,
                         double timeoutSeconds,
                         std::function<void(uint64_t)> throwIfPeerLost,
                         std::function<void(const Error&)> onStall,
                         double stallWarnSeconds,
                         std::function<void(uint64_t, double)> onLongWait)
    : reached_(reached),
      passed_(passed),
      timeoutSeconds_(timeoutSeconds),
      throwIfPeerLost_(std::move(throwIfPeerLost)),
      onStall_(std::move(onStall)),
      stallWarnSeconds_(onLongWait ? stallWarnSeconds : 0),
      onLongWait_(std::move(onLongWait)),
      thread_([this] { run(); }) {}

LaunchWatch::~LaunchWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

// The clock of a launch starts when the watch first sees the stream at
// it, so time the stream spent on the caller's own work before it counts
// for nothing.
void LaunchWatch::run() {
  using Clock = std::chrono::steady_clock;
  uint64_t watched = 0;
  Clock::time_point since;
  double nextWarnSeconds = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kPollInterval, [this] { return stopping_; })) {
    const uint64_t reached = load(reached_);
    if (load(passed_) >= reached) {  // no marked launch in progress
      if (std::optional<Error> lost = lostPeer()) {
        onStall_(*lost);
        return;
      }
      continue;
    }
    if (reached != watched) {
      watched = reached;
      since = Clock::now();
      nextWarnSeconds = stallWarnSeconds_;
      continue;
    }
    const double stalled =
        std::chrono::duration<double>(Clock::now() - since).count();
    if (stallWarnSeconds_ > 0 && stalled >= nextWarnSeconds) {
      onLongWait_(reached, stalled);
      nextWarnSeconds = 2 * stalled;
    }
    if (std::optional<Error> error = verdict(reached, stalled)) {
      onStall_(*error);
      return;
    }
  }
}

std::optional<Error> LaunchWatch::lostPeer() const {
  if (!betweenLaunches_.load(std::memory_order_relaxed)) return std::nullopt;
  try {
    throwIfPeerLost_(0);
  } catch (const Error& lost) {
    return lost;
  }
  return std::nullopt;
}

std::optional<Error> LaunchWatch::verdict(uint64_t launch,
                                          double seconds) const {
  if (seconds < kStallSeconds) return std::nullopt;
  try {
    throwIfPeerLost_(launch);
  } catch (const Error& lost) {
    return lost;
  }
  if (timeoutSeconds_ <= 0 || seconds <= timeoutSeconds_) return std::nullopt;
  return Error(
      ncclRemoteError,
      format("launch #%llu (a collective or send/receive among this "
             "host's GPU ranks) did not complete within %g s: a "
             "peer rank is gone or stuck (set HETCCL_TIMEOUT to "
             "wait longer)",
             static_cast<unsigned long long>(launch), timeoutSeconds_));
}

}  // namespace hetccl
