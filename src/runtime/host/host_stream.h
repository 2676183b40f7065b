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
#include "util/error.h"

namespace hetccl {

// What a stream does with the tasks behind a failed one; synchronize
// reports the first error either way.
enum class AfterFailure {
  // A CPU rank's stream: they run (an operation of a failed communicator
  // fails at once).
  RunOn,
  // An emulated GPU's stream: they never run, as a GPU stream stays at a
  // kernel that cannot complete, so nothing behind the failure (a word
  // written, an event reached) tells another stream that it succeeded.
  // Only a ReleasedWait lets them run, as a GPU stream runs on once its
  // rank's abort released its waits.
  Stop,
};

// Thrown by a task whose wait this rank's abort, destroy or revoke ended
// before its peer got there: the task failed, but its stream runs on.
class ReleasedWait : public Error {
 public:
  using Error::Error;
};

class HostStream {
 public:
  explicit HostStream(AfterFailure afterFailure = AfterFailure::RunOn);
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
  void run(const StreamTask& task);
  void recordFailure(const Error& error, bool released);

  const AfterFailure afterFailure_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<StreamTask> queue_;
  std::atomic<size_t> pending_{0};  // queue_.size(), readable without the lock
  bool running_ = false;            // a task is being executed
  bool stopping_ = false;
  ncclResult_t failure_ = ncclSuccess;
  std::string failureMessage_;
  bool stopped_ = false;  // AfterFailure::Stop, past a failure
  std::thread worker_;
};

}  // namespace hetccl
