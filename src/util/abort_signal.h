// A communicator's "stop everything" signal. Raised by ncclCommAbort, by the
// watchdog when a peer process dies, or by a timed-out wait; every blocking
// loop in the library polls it, so a raised signal ends all waits promptly.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "nccl.h"

namespace hetccl {

class AbortSignal {
 public:
  // The first reason wins; later raises keep the original cause.
  void raise(ncclResult_t code, const std::string& reason);
  bool raised() const { return flag_.load(std::memory_order_acquire); }
  const std::atomic<bool>* flag() const { return &flag_; }
  ncclResult_t code() const;
  std::string reason() const;
  // Throws Error(code, reason) if raised.
  void throwIfRaised() const;

 private:
  std::atomic<bool> flag_{false};
  mutable std::mutex mutex_;
  ncclResult_t code_ = ncclSuccess;
  std::string reason_;
};

}  // namespace hetccl
