// A transfer posted on a link that a progress thread drives (tcp, ucx):
// completed or failed by that thread, waited for by the one that posted it.
// A waiter may poll for a while before it sleeps (a small transfer is often
// done by then, and a sleeping waiter costs a wake-up).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "transport/link.h"
#include "transport/transfer_name.h"
#include "util/error.h"

namespace hetccl {

class PostedRequest : public TransferRequest {
 public:
  explicit PostedRequest(TransferName name, std::chrono::microseconds poll =
                                                std::chrono::microseconds(0))
      : name_(name), poll_(poll) {}

  bool done() override;
  void wait(const AbortSignal& abort, double timeoutSeconds) override;

  // Called by the progress thread. The first of these wins.
  void complete();
  void failWith(const Error& error);

  int peer() const override { return name_.peer; }
  TransferWay way() const override {
    return name_.sending ? TransferWay::kSend : TransferWay::kReceive;
  }
  // One piece, done once settled (a failure ends the wait anyway).
  PieceCount pieces() const override {
    return {settled_.load(std::memory_order_acquire) ? 1u : 0u, 1u};
  }
  std::string description() const { return name_.text(); }

 private:
  enum class State { kPending, kDone, kFailed };

  // Throws the stored error; call with the lock held and state kFailed.
  [[noreturn]] void throwFailure() const;

  const TransferName name_;
  const std::chrono::microseconds poll_;
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_ = State::kPending;
  std::atomic<bool> settled_{false};  // state_ is no longer kPending
  std::optional<Error> error_;
};

}  // namespace hetccl
