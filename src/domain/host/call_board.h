// Where the ranks of a host domain compare their calls: in their segments,
// each rank writing only its own part. A rank publishes each collective's
// signature, in a small ring indexed by the collective's number, before it
// posts any flag for it; a rank that waits for a peer's flag compares the
// peer's entry for its own current collective once it is there (the ring
// keeps it there while the peer runs ahead). Calls that disagree are
// reported in the rank's segment, where every peer's waits look, raise the
// communicator's abort signal and fail the operation with
// ncclInvalidUsage naming both calls. A rank whose operation needed no
// peer (a broadcast's root) learns from checkAll(), which the
// communicator's async-error query runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "op/call_signature.h"
#include "shm/shm_counter.h"
#include "util/abort_signal.h"
#include "util/error.h"

namespace hetccl {

// A rank's part of the board, in its segment.
struct CallBoardArea {
  // Peers are at most a few collectives ahead or behind while one waits
  // for the other (a rank reuses a staging buffer only after every rank
  // finished reading it two rounds before).
  static constexpr size_t kRing = 8;

  struct alignas(64) Entry {
    // The collective's number (from 1) once `call` is complete; 0 while
    // being written.
    std::atomic<uint64_t> index;
    CallSignature call;
  };
  Entry calls[kRing];
  ShmCounter reported;  // 1 once `report` holds calls that disagree
  struct alignas(64) {
    int32_t rankA, rankB;
    CallSignature a, b;
  } report;
};

class CallBoard {
 public:
  // `areas`: every rank's part, by rank. `abort` is raised on calls that
  // disagree.
  CallBoard(int rank, std::vector<CallBoardArea*> areas,
            std::shared_ptr<AbortSignal> abort);

  // This rank starts collective number `index` (1, 2, ...): published
  // before any flag of it. By the collectives' thread.
  void begin(uint64_t index, const CallSignature& call);
  // The current collective's number on the communicator (its
  // CallSignature::sequence, the user's call's); 0 before the first. By
  // the collectives' thread.
  uint64_t currentSequence() const { return currentSequence_; }
  // Compares `peer`'s current collective with this rank's once the peer
  // published it; throws if they disagree. By the collectives' thread.
  void checkPeer(int peer);
  // Throws the disagreement a peer reported, if any. Any thread.
  void checkReports() const;
  // Compares every call a peer published with this rank's of the same
  // number, and the peers' reports; raises the abort signal on calls that
  // disagree. Any thread.
  void checkAll() const;
  // Reports calls that disagree to the peers, raises the abort signal and
  // throws. Any thread.
  [[noreturn]] void disagree(int rankA, const CallSignature& a, int rankB,
                             const CallSignature& b) const;

 private:
  // `rank`'s collective number `index`, if it published it and it is
  // still in its ring.
  std::optional<CallSignature> published(int rank, uint64_t index) const;
  // The error a peer reported, if any.
  std::optional<Error> reportOf(int peer) const;
  void report(int rankA, const CallSignature& a, int rankB,
              const CallSignature& b) const;

  const int rank_;
  const std::vector<CallBoardArea*> areas_;
  const std::shared_ptr<AbortSignal> abort_;
  uint64_t current_ = 0;           // this rank's current collective
  uint64_t currentSequence_ = 0;   // its number on the communicator
  std::vector<uint64_t> checked_;  // by peer: the collective compared last
  mutable std::mutex reportMutex_;
};

}  // namespace hetccl
