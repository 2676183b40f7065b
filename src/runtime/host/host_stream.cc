#include "runtime/host/host_stream.h"

#include <sched.h>

#include "util/error.h"
#include "util/log.h"

namespace hetccl {

HostStream::HostStream(AfterFailure afterFailure)
    : afterFailure_(afterFailure), worker_([this] { serve(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void HostStream::enqueue(StreamTask task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    pending_.store(queue_.size(), std::memory_order_release);
  }
  wake_.notify_one();
}

void HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [this] { return queue_.empty() && !running_; });
  if (failure_ != ncclSuccess) throw Error(failure_, failureMessage_);
}

bool HostStream::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty() && !running_;
}

void HostStream::throwIfFailed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_ != ncclSuccess) throw Error(failure_, failureMessage_);
}

// Only the first failure is logged: once a communicator failed, every task
// queued behind it fails the same way.
void HostStream::recordFailure(const Error& error, bool released) {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = stopped_ || (afterFailure_ == AfterFailure::Stop && !released);
  if (failure_ != ncclSuccess) return;
  failure_ = error.code();
  failureMessage_ = error.what();
  LOG_WARN(kLogColl, "host stream %p: %s", static_cast<void*>(this),
           error.what());
}

// Work often comes in quick succession (a training step's collectives), and
// waking a sleeping thread costs microseconds: the worker first yields its
// core a few times, watching for new work, before it sleeps.
void HostStream::awaitWork(std::unique_lock<std::mutex>& lock) {
  constexpr int kYieldsBeforeSleep = 64;
  lock.unlock();
  for (int i = 0; i < kYieldsBeforeSleep; ++i) {
    if (pending_.load(std::memory_order_acquire) > 0) break;
    sched_yield();
  }
  lock.lock();
  wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
}

void HostStream::run(const StreamTask& task) {
  try {
    task();
  } catch (const ReleasedWait& error) {
    recordFailure(error, /*released=*/true);
  } catch (...) {
    recordFailure(currentExceptionAsError(), /*released=*/false);
  }
}

// Queued work still runs after stopping_ is set: destroying a stream, like
// destroying a CUDA stream, does not discard what was enqueued. A task that
// a stopped stream skips is still destroyed, in order, so that what it
// captured can tell that it never ran.
void HostStream::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queue_.empty() && !stopping_) awaitWork(lock);
    if (queue_.empty()) return;
    StreamTask task = std::move(queue_.front());
    queue_.pop_front();
    pending_.store(queue_.size(), std::memory_order_release);
    running_ = true;
    const bool skip = stopped_;
    lock.unlock();
    if (!skip) run(task);
    task = nullptr;  // release what the task captured outside the lock
    lock.lock();
    running_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

}  // namespace hetccl
