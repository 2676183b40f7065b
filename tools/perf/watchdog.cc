#include "perf/watchdog.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "perf/local_ranks.h"

namespace hetccl {
namespace perf {

Watchdog::Watchdog(double seconds) {
  if (seconds > 0) thread_ = std::thread(&Watchdog::watch, this, seconds);
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  finished_.notify_all();
  thread_.join();
}

void Watchdog::watch(double seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool finished = finished_.wait_for(
      lock, std::chrono::duration<double>(seconds), [this] { return done_; });
  if (finished) return;
  std::fprintf(stderr, "hetccl-perf: timed out after %g s (--timeout)\n",
               seconds);
  std::fflush(nullptr);
  // The main thread may be blocked inside a collective: leave at once.
  _exit(kExitTimeout);
}

}  // namespace perf
}  // namespace hetccl
