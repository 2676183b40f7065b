// Threads that run the parts of one job beside the thread that asks for
// it: MemoryWorkers (memory_workers.h) cuts a CPU rank's large copies and
// reductions into such parts.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hetccl {

class HelperThreads {
 public:
  // Starts `helpers` threads (0: the caller does all the work).
  explicit HelperThreads(int helpers);
  // Stops and joins them.
  ~HelperThreads();
  HelperThreads(const HelperThreads&) = delete;
  HelperThreads& operator=(const HelperThreads&) = delete;

  // Parts a job may be cut into: the helpers and the caller.
  int parts() const { return static_cast<int>(threads_.size()) + 1; }
  // Runs body(part) for every part in [0, parts): part 0 on the calling
  // thread, part i on helper i - 1; returns when all are done and rethrows
  // the first exception a part threw. One job at a time (MemoryWorkers
  // makes its callers take turns).
  void run(int parts, const std::function<void(int part)>& body);

 private:
  void serve(int part);

  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable finished_;
  const std::function<void(int)>* body_ = nullptr;
  uint64_t job_ = 0;  // raised once per job
  int parts_ = 0;
  int pending_ = 0;  // helpers' parts not done yet
  bool stopping_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace hetccl
