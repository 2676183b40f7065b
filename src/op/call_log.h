// This rank's latest collective calls, by number. A peer's transfer that
// no receive of this rank waits for may belong to a call that this rank
// made differently, whose plan never receives from that peer (a broadcast
// whose root the two ranks disagree on): the transports compare such a
// transfer's signature with this rank's call of the same number here. The
// core records each call as it is launched; the transports' threads look
// calls up.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

#include "op/call_signature.h"

namespace hetccl {

class CallLog {
 public:
  // How many calls are kept: a peer is never that far ahead or behind
  // while one of its transfers waits unread.
  static constexpr size_t kKept = 64;

  // A collective call, in call order (sends and receives are not kept:
  // each always meets a receive or send of the peer's).
  void record(const CallSignature& call);
  // Whether this rank made collective call number `sequence` already.
  bool made(uint64_t sequence) const {
    return sequence <= latest_.load(std::memory_order_acquire);
  }
  // The number of this rank's latest collective call (0: none yet).
  uint64_t latest() const { return latest_.load(std::memory_order_acquire); }
  // This rank's call number `sequence`, if it made it and still keeps it.
  std::optional<CallSignature> find(uint64_t sequence) const;

 private:
  mutable std::mutex mutex_;
  std::array<CallSignature, kKept> calls_{};
  std::atomic<uint64_t> latest_{0};
};

}  // namespace hetccl
