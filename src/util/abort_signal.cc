#include "util/abort_signal.h"

#include <chrono>
#include <thread>

#include "util/error.h"

namespace hetccl {

void AbortSignal::raise(ncclResult_t code, const std::string& reason) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (flag_.load(std::memory_order_relaxed)) return;
  if (held_) {
    // This rank's own disagreement outranks one it was told of: it names
    // this rank's calls.
    if (code == ncclInvalidUsage) {
      heldCode_ = code;
      heldReason_ = reason;
    }
    raised_.wait_for(lock, std::chrono::duration<double>(settleSeconds_),
                     [this] { return flag_.load(std::memory_order_relaxed); });
    return raiseLocked(heldCode_, heldReason_);
  }
  // Under the mutex: a second raise waits, and setAnnouncer(nullptr) too.
  if (announced(code) && announce_) {
    announcing_.store(true, std::memory_order_release);
    announce_(code, reason);
    announcing_.store(false, std::memory_order_release);
  }
  raiseLocked(code, reason);
}

void AbortSignal::raiseHeld() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (held_) raiseLocked(heldCode_, heldReason_);
}

bool AbortSignal::hold(ncclResult_t code, const std::string& reason,
                       double settleSeconds) {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  while (!lock.owns_lock()) {
    if (announcing_.load(std::memory_order_acquire)) return false;
    std::this_thread::yield();
    lock.try_lock();
  }
  if (held_) return true;
  held_ = true;
  heldCode_ = code;
  heldReason_ = reason;
  settleSeconds_ = settleSeconds;
  return true;
}

void AbortSignal::raiseUnannounced(ncclResult_t code,
                                   const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  raiseLocked(code, reason);
}

void AbortSignal::raiseLocked(ncclResult_t code, const std::string& reason) {
  if (flag_.load(std::memory_order_relaxed)) return;
  code_ = code;
  reason_ = reason;
  flag_.store(true, std::memory_order_release);
  raised_.notify_all();
}

void AbortSignal::setAnnouncer(Announcer announce) {
  std::lock_guard<std::mutex> lock(mutex_);
  announce_ = std::move(announce);
}

ncclResult_t AbortSignal::code() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return code_;
}

std::string AbortSignal::reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reason_;
}

void AbortSignal::throwIfRaised() const {
  if (!raised()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  throw Error(code_, reason_);
}

}  // namespace hetccl
