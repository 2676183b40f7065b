// The transfers of one direction of a shm link, in posting order and
// numbered from 0 (a send and a receive with the same number match). The
// front one moves first; once the direction breaks, every queued transfer
// fails with the error that broke it. Only touched under the transport's
// progress mutex.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "transport/shm/shm_transfer.h"
#include "util/error.h"

namespace hetccl {

class ShmTransferQueue {
 public:
  std::shared_ptr<ShmTransfer> post(int peer, char* buffer, size_t bytes,
                                    bool sending, const CallSignature& call) {
    auto transfer = std::make_shared<ShmTransfer>(
        peer, buffer, bytes, nextSequence_++, sending, call);
    queue_.push_back(transfer);
    return transfer;
  }

  bool empty() const { return queue_.empty(); }
  bool broken() const { return broken_.has_value(); }
  // Keeps the first error.
  void breakWith(Error error) {
    if (!broken_) broken_ = std::move(error);
  }

  // Completes front transfers while `move(transfer, progressed)` finishes
  // them; fails them all once the direction broke (`move` may break it).
  // True if anything moved or ended.
  template <typename Move>
  bool progress(Move move) {
    bool progressed = false;
    while (!broken_ && !queue_.empty() && move(*queue_.front(), progressed)) {
      queue_.front()->complete();
      queue_.pop_front();
      progressed = true;
    }
    if (broken_ && !queue_.empty()) {
      for (auto& transfer : queue_) transfer->failWith(*broken_);
      queue_.clear();
      progressed = true;
    }
    return progressed;
  }

 private:
  std::deque<std::shared_ptr<ShmTransfer>> queue_;
  uint64_t nextSequence_ = 0;
  std::optional<Error> broken_;
};

}  // namespace hetccl
