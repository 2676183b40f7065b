// --timeout for a rank that is not supervised by hetccl-perf -np: ends the
// process if the run is not over in time, so that a hung collective cannot
// hold a launcher's allocation forever.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace hetccl {
namespace perf {

class Watchdog {
 public:
  // seconds <= 0: no watchdog.
  explicit Watchdog(double seconds);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch(double seconds);

  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace perf
}  // namespace hetccl
