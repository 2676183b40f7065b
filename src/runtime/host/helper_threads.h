// Threads that share one large copy or reduction with the thread that runs
// a CPU rank's plan. One core streams memory at a few GB/s (a float32 sum
// of two sources wrote 3.7 GB/s and a copy about 6 GB/s on the H200
// machine's CPU), less than a link between hosts carries, so a plan whose
// copies and reductions run on its own thread alone leaves the link idle.
// The parts are element ranges: every element is computed as it would be
// on one thread, so results stay bitwise the same.
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
  // the first exception a part threw. One job at a time (a plan's thread).
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
