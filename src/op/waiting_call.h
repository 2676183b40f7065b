// Which collective call this rank waits on a peer's transfer for, and
// since when. Two ranks whose calls disagree so that each waits to receive
// from the other (a broadcast where each names the other as the root)
// exchange no bytes, so no header ever shows the disagreement; the call
// probe (core/call_probe.h) reads this to ask the peer about a call that
// has waited long. The waits mark it (a plan's, the GPU engine proxy's);
// the probe's thread reads it. One wait at a time is remembered, the
// latest: a stall is what stays the latest for long.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace hetccl {

class WaitingCall {
 public:
  using Clock = std::chrono::steady_clock;

  struct Stall {
    // The collective's number (CallSignature::sequence); 0 for a send or
    // a receive, which has none to compare.
    uint64_t sequence;
    int peer;        // the rank waited for; -1 when unknown
    double seconds;  // how long it has waited
  };

  // A wait for `peer` (-1: unknown) in collective `sequence` (0: a send
  // or a receive) began `since`.
  void enter(uint64_t sequence, int peer, Clock::time_point since) {
    sequence_.store(sequence, std::memory_order_relaxed);
    peer_.store(peer, std::memory_order_relaxed);
    since_.store(since.time_since_epoch().count(), std::memory_order_release);
  }
  void enter(uint64_t sequence, int peer) {
    enter(sequence, peer, Clock::now());
  }
  void leave() { since_.store(kNotWaiting, std::memory_order_release); }

  // The wait that has lasted at least `seconds`, if one has.
  std::optional<Stall> stalledFor(double seconds) const {
    const Clock::rep since = since_.load(std::memory_order_acquire);
    if (since == kNotWaiting) return std::nullopt;
    const Clock::time_point began{Clock::duration(since)};
    const double waited =
        std::chrono::duration<double>(Clock::now() - began).count();
    if (waited < seconds) return std::nullopt;
    return Stall{sequence_.load(std::memory_order_relaxed),
                 peer_.load(std::memory_order_relaxed), waited};
  }

 private:
  static constexpr Clock::rep kNotWaiting = 0;

  std::atomic<uint64_t> sequence_{0};
  std::atomic<int> peer_{-1};
  std::atomic<Clock::rep> since_{kNotWaiting};
};

// Marks one wait on `waiting` (may be null) for its scope.
class WaitScope {
 public:
  WaitScope(WaitingCall* waiting, uint64_t sequence, int peer)
      : waiting_(waiting) {
    if (waiting_) waiting_->enter(sequence, peer);
  }
  ~WaitScope() {
    if (waiting_) waiting_->leave();
  }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  WaitingCall* waiting_;
};

}  // namespace hetccl
