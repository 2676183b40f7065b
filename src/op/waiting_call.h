// Which call this rank waits on a peer for, where, and since when. Two
// ranks whose calls disagree so that each waits to receive from the other
// (a broadcast where each names the other as the root) exchange no bytes,
// so no header ever shows the disagreement; the call probe
// (core/call_probe.h) reads this to ask the peer about a call that has
// waited long, and the stall reports and status files say from it who is
// waited for, on which leg and how far the transfer got. One per
// communicator (core/communicator.h owns it): the waits mark it (a plan's
// waits on its links, the host domain's waits for its peers through
// DomainSetup, the GPU engine proxy's); the probe's thread (or, in a
// communicator of one domain, the stall watch's: core/stall_watch.h) reads
// it. One wait at a time is remembered, the latest: a stall is what stays
// the latest for long. A scope that ends clears only its own wait, so a
// wait that ends on one thread does not hide another thread's later one.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace hetccl {

// How many pieces of a transfer are done, of how many (0: unknown).
struct PieceCount {
  uint32_t done = 0;
  uint32_t total = 0;
};

// What can say how far it got while another thread waits for it (a
// transfer); read by the probe's thread, so it must be safe to call then.
class PieceSource {
 public:
  virtual ~PieceSource() = default;
  virtual PieceCount pieces() const = 0;
};

// Which way a transfer goes, for the stall reports.
enum class TransferWay : uint8_t { kUnknown, kSend, kReceive };

// Where a GPU rank's staged piece stands, for the stall reports.
enum class EngineStage : uint8_t {
  kNone,            // not the staged GPU engine
  kStreamNotThere,  // its stream has not reached the launch
  kDeviceToHost,    // the stream is to copy the piece into its slot
  kNetwork,         // posted on the link, not done
  kHostToDevice,    // the stream is to copy the slot's last piece out
};
// "network", "device-to-host copy", ...; "" for kNone.
const char* engineStageName(EngineStage stage);

// The leg a wait is on, and how far it got.
struct WaitLeg {
  enum class Kind : uint8_t {
    kLink,    // a transfer with a rank of another domain
    kDomain,  // a step of this rank's domain, with a rank of the domain
  };
  Kind kind = Kind::kLink;
  TransferWay way = TransferWay::kUnknown;  // link: the transfer's
  EngineStage stage = EngineStage::kNone;
  PieceCount pieces;  // link: of the transfer waited for
  // Domain: what the step waits for ("broadcast data"), or, where
  // stepIndex > 0, the step the GPU engine's stream has not got past
  // ("reduceScatter", a vendor-library call); static storage.
  const char* step = nullptr;
  // Domain, GPU engine: the step's place among its op's domain steps
  // (from 1) and their count (0: unknown).
  uint16_t stepIndex = 0;
  uint16_t stepCount = 0;
};

class WaitingCall {
 public:
  using Clock = std::chrono::steady_clock;

  struct Stall {
    // The collective's number (CallSignature::sequence); 0 for a send or
    // a receive, which has none to compare.
    uint64_t sequence;
    int peer;        // the rank waited for; -1 when unknown
    double seconds;  // how long it has waited
    WaitLeg leg;     // pieces as of now
  };

  // A wait for `peer` (-1: unknown) in collective `sequence` (0: a send
  // or a receive) began `since`, on `leg`; `source` (may be null) says how
  // many of the transfer's pieces are done whenever it is read, and must
  // live until the wait is left. Returns the wait's number, for leave().
  uint64_t enter(uint64_t sequence, int peer, Clock::time_point since,
                 const WaitLeg& leg = {}, const PieceSource* source = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    wait_ = Wait{sequence, peer, since, leg, source, ++entered_};
    return entered_;
  }
  // The same for a wait that begins now, as the next look at it finds it:
  // the waits of every operation mark themselves, and a clock read costs
  // more than the rest of a mark; a stall is measured in seconds, the
  // looks come every few tens of milliseconds.
  uint64_t enter(uint64_t sequence, int peer, const WaitLeg& leg = {},
                 const PieceSource* source = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    wait_ = Wait{sequence, peer, std::nullopt, leg, source, ++entered_};
    return entered_;
  }
  // Ends the wait remembered now, whichever it is.
  void leave() { leaveIf(0); }
  // Ends wait number `entered` (from enter()), if it is still the latest.
  void leave(uint64_t entered) { leaveIf(entered); }

  // The wait that has lasted at least `seconds`, if one has.
  std::optional<Stall> stalledFor(double seconds) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!wait_) return std::nullopt;
    const Clock::time_point now = Clock::now();
    if (!wait_->since) wait_->since = now;
    const double waited =
        std::chrono::duration<double>(now - *wait_->since).count();
    if (waited < seconds) return std::nullopt;
    Stall stall{wait_->sequence, wait_->peer, waited, wait_->leg};
    if (wait_->source) stall.leg.pieces = wait_->source->pieces();
    return stall;
  }

 private:
  struct Wait {
    uint64_t sequence;
    int peer;
    // None until a look found the wait (enter() without a time).
    std::optional<Clock::time_point> since;
    WaitLeg leg;
    const PieceSource* source;
    uint64_t entered;
  };
  // 0: any wait.
  void leaveIf(uint64_t entered) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!wait_ || (entered != 0 && wait_->entered != entered)) return;
    wait_.reset();
  }

  mutable std::mutex mutex_;
  mutable std::optional<Wait> wait_;  // a look dates a wait it finds
  uint64_t entered_ = 0;              // waits entered so far
};

// Marks one wait on `waiting` (may be null) for its scope.
class WaitScope {
 public:
  // `source` must outlive the scope.
  WaitScope(WaitingCall* waiting, uint64_t sequence, int peer,
            const WaitLeg& leg = {}, const PieceSource* source = nullptr)
      : waiting_(waiting) {
    if (waiting_) entered_ = waiting_->enter(sequence, peer, leg, source);
  }
  ~WaitScope() {
    if (waiting_) waiting_->leave(entered_);
  }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  WaitingCall* waiting_;
  uint64_t entered_ = 0;
};

}  // namespace hetccl
