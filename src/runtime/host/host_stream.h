// A host stream: an in-order queue of tasks served by a thread of its own.
// It gives CPU ranks the same stream semantics that GPU ranks get from their
// runtime, so every plan is written once against streams.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/runtime.h"

namespace hetccl {

class HostStream {
 public:
  HostStream();
  ~HostStream();  // Finishes the queued work, then stops the thread.
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  void enqueue(StreamTask task);
  // Waits for everything queued so far; throws the first recorded error.
  void synchronize();
  bool idle();
  // The first error any task raised, kept until the stream is destroyed.
  void throwIfFailed();

 private:
  void serve();
  void awaitWork(std::unique_lock<std::mutex>& lock);
  void recordFailure(ncclResult_t code, const std::string& message);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<StreamTask> queue_;
  std::atomic<size_t> pending_{0};  // queue_.size(), readable without the lock
  bool running_ = false;            // a task is being executed
  bool stopping_ = false;
  ncclResult_t failure_ = ncclSuccess;
  std::string failureMessage_;
  std::thread worker_;
};

}  // namespace hetccl
