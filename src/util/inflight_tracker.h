// Counts work handed to another thread (a stream task) that has not
// finished yet, so that its owner can wait for it before it goes away.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>

namespace hetccl {

class InflightTracker {
 public:
  // One piece of work, in flight from begin() until the last copy of its
  // ticket is gone. Copyable so that it fits in a std::function; it may
  // outlive the tracker (a task can hold the last reference to the
  // tracker's owner, and the order in which a lambda's captures are
  // destroyed is unspecified).
  class Ticket {
   private:
    friend class InflightTracker;
    struct Token;
    explicit Ticket(std::shared_ptr<Token> token) : token_(std::move(token)) {}
    std::shared_ptr<Token> token_;
  };

  InflightTracker();

  Ticket begin();
  // Waits until no work is in flight; false if `timeoutSeconds` ran out.
  bool drain(double timeoutSeconds);

 private:
  struct Count {
    std::mutex mutex;
    std::condition_variable idle;
    int inflight = 0;
  };
  std::shared_ptr<Count> count_;
};

}  // namespace hetccl
