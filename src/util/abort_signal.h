// A communicator's "stop everything" signal. Raised by ncclCommAbort, by the
// watchdog when a peer process dies, by a timed-out wait, by calls found to
// disagree, or by the cause another rank announced; every blocking loop in
// the library polls it, so a raised signal ends all waits promptly.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "nccl.h"

namespace hetccl {

class AbortSignal {
 public:
  // The first reason wins; later raises keep the original cause.
  void raise(ncclResult_t code, const std::string& reason);
  // A raise the announcer does not hear of: what this rank alone decided
  // (ncclCommRevoke), or what another rank announced already.
  void raiseUnannounced(ncclResult_t code, const std::string& reason);
  // Runs on the raising thread before a raise takes effect whose cause
  // the other ranks share (announced(): calls that disagree, a rank lost),
  // with the cause; meanwhile no wait sees the signal. A communicator of
  // several domains tells its other ranks first (core/call_probe.h), so
  // that each reports that cause, not the exit of the rank that found it.
  // Null: none. Setting it waits for one that runs.
  using Announcer =
      std::function<void(ncclResult_t code, const std::string& reason)>;
  static bool announced(ncclResult_t code) {
    return code == ncclInvalidUsage || code == ncclRemoteError;
  }
  void setAnnouncer(Announcer announce);
  // A cause that any raise takes instead of its own, unannounced: one
  // another rank announced, which every rank raises once every rank holds
  // it (raiseHeld). Meanwhile a raise here waits for that, at most
  // `settleSeconds`: a rank that raised early might exit, and a rank that
  // holds nothing yet would report that exit as the cause. The first held
  // cause stays, but for a disagreement this rank finds itself meanwhile
  // (ncclInvalidUsage), which names its own calls. False, holding nothing,
  // while this rank announces a cause of its own: that raise keeps the
  // signal until the other ranks answer, and the rank that told this one
  // may wait for this rank's answer.
  bool hold(ncclResult_t code, const std::string& reason, double settleSeconds);
  // Raises the held cause, if any.
  void raiseHeld();
  bool raised() const { return flag_.load(std::memory_order_acquire); }
  const std::atomic<bool>* flag() const { return &flag_; }
  ncclResult_t code() const;
  std::string reason() const;
  // Throws Error(code, reason) if raised.
  void throwIfRaised() const;

 private:
  void raiseLocked(ncclResult_t code, const std::string& reason);

  std::atomic<bool> flag_{false};
  mutable std::mutex mutex_;
  Announcer announce_;
  std::atomic<bool> announcing_{false};  // announce_ runs, under mutex_
  std::condition_variable raised_;       // for raises that wait on a held cause
  bool held_ = false;
  double settleSeconds_ = 0;
  ncclResult_t heldCode_ = ncclSuccess;
  std::string heldReason_;
  ncclResult_t code_ = ncclSuccess;
  std::string reason_;
};

}  // namespace hetccl
