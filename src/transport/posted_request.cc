#include "transport/posted_request.h"

#include <sched.h>

#include <chrono>

#include "util/deadline.h"

namespace hetccl {
namespace {

// How often a waiter looks at the abort signal. The progress thread wakes
// waiters itself on completion and failure, so this only bounds how long
// an abort takes to be noticed.
constexpr auto kAbortCheckInterval = std::chrono::milliseconds(10);

}  // namespace

bool PostedRequest::done() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ == State::kFailed) throwFailure();
  return state_ == State::kDone;
}

void PostedRequest::wait(const AbortSignal& abort, double timeoutSeconds) {
  const auto pollUntil = std::chrono::steady_clock::now() + poll_;
  while (!settled_.load(std::memory_order_acquire) &&
         std::chrono::steady_clock::now() < pollUntil)
    sched_yield();  // ranks may outnumber cores: let the progress thread run
  Deadline deadline = Deadline::after(timeoutSeconds);
  std::unique_lock<std::mutex> lock(mutex_);
  while (state_ == State::kPending) {
    if (abort.raised()) {
      ncclResult_t code = abort.code();
      fail(code == ncclSuccess ? ncclSystemError : code,
           "aborted while waiting for %s: %s", description().c_str(),
           abort.reason().c_str());
    }
    // A peer that stays silent this long is as good as lost (NCCL's
    // ncclRemoteError), whether it hangs, is stopped or is unreachable.
    if (deadline.expired())
      fail(ncclRemoteError,
           "timed out after %g s waiting for %s; set HETCCL_TIMEOUT to wait "
           "longer",
           deadline.seconds(), description().c_str());
    changed_.wait_for(lock, kAbortCheckInterval);
  }
  if (state_ == State::kFailed) throwFailure();
}

void PostedRequest::complete() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != State::kPending) return;
    state_ = State::kDone;
    settled_.store(true, std::memory_order_release);
  }
  changed_.notify_all();
}

void PostedRequest::failWith(const Error& error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != State::kPending) return;
    state_ = State::kFailed;
    error_ = error;
    settled_.store(true, std::memory_order_release);
  }
  changed_.notify_all();
}

void PostedRequest::throwFailure() const {
  throw Error(error_->code(),
              format("%s failed: %s", description().c_str(), error_->what()));
}

}  // namespace hetccl
