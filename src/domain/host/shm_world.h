// The shared-memory state of a host domain on one machine: one segment per
// rank, mapped by every rank. A rank writes only into its own segment and
// its own flags; peers read them. All flags are monotonic counters, so no
// flag is ever reset and a stale value can never be mistaken for a new one.
// The segments also hold the ranks' calls (call_board.h), which every wait
// for a peer compares. A wait for a peer's flag that is not over at its
// first look is marked on the communicator's WaitingCall (WaitMarks), so
// that the stall reports and status files name the rank waited for.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "domain/host/call_board.h"
#include "domain/host/shm_settings.h"
#include "op/waiting_call.h"
#include "shm/shm_counter.h"
#include "shm/shm_segment.h"
#include "util/abort_signal.h"
#include "util/oob.h"
#include "util/peer_liveness.h"
#include "util/spin_wait.h"

namespace hetccl {

// Where a host domain marks its waits for peers (null: nowhere), and the
// communicator's rank of each of the domain's ranks (empty: the same).
struct WaitMarks {
  std::shared_ptr<WaitingCall> waiting;
  std::vector<int> globalRanks;

  int global(int local) const {
    return local >= 0 && local < static_cast<int>(globalRanks.size())
               ? globalRanks[local]
               : local;
  }
};

class ShmWorld {
 public:
  // `abort` ends every wait, and so does `timeoutSeconds` (0: none) without
  // progress; `liveness` ends waits for peers that exited; `marks` say
  // where the waits that last are marked.
  ShmWorld(Oob& oob, const ShmSettings& settings, double timeoutSeconds,
           std::shared_ptr<AbortSignal> abort,
           std::shared_ptr<const PeerLiveness> liveness, WaitMarks marks = {});

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const ShmSettings& settings() const { return settings_; }
  AbortSignal& abortSignal() { return *abort_; }
  const AbortSignal& abortSignal() const { return *abort_; }
  // Starts a back-off wait bound to this world's signals and timeout.
  SpinWait makeWait(const char* what, int peer) {
    return SpinWait(*abort_, liveness_.get(), timeoutSeconds_, what, peer);
  }
  // Work that every wait for a peer does between its looks: the host
  // engine moves its rank's transfers to other domains there. Set before
  // the first operation.
  void setWhileWaiting(std::function<void()> work) {
    whileWaiting_ = std::move(work);
  }
  // One back-off pause of `wait`, then that work.
  void pause(SpinWait& wait) {
    wait.pause();
    if (whileWaiting_) whileWaiting_();
  }

  // Collective flags of rank r, all holding round numbers:
  //  ready: r's input buffer holds that round's data;
  //  done:  r has read the round's inputs and its output buffer is filled;
  //  freed: r has read the round's outputs.
  ShmCounter& ready(int r) { return header(r)->ready; }
  ShmCounter& done(int r) { return header(r)->done; }
  ShmCounter& freed(int r) { return header(r)->freed; }
  // Point-to-point counters, in the owner's segment: chunks it has sent to
  // `peer`, and chunks it has consumed from `peer`.
  ShmCounter& sent(int owner, int peer);
  ShmCounter& consumed(int owner, int peer);

  // Staging buffers alternate between two halves by round parity.
  char* input(int r, uint64_t round);
  char* output(int r, uint64_t round);
  char* p2pSlot(int owner, int peer, uint64_t chunk);
  // The call of the message whose chunk is in that slot.
  CallSignature& p2pCall(int owner, int peer, uint64_t chunk);
  CallBoard& board() { return *board_; }
  const CallBoard& board() const { return *board_; }

  static void post(ShmCounter& flag, uint64_t value) { flag.post(value); }
  static bool reached(const ShmCounter& flag, uint64_t target) {
    return flag.load() >= target;
  }
  // Compares the peer's current collective with this rank's (as soon as
  // the peer published it) while it waits, and fails if a peer reported
  // calls that disagree. A wait past the first look is marked, in the
  // current collective, as a step of the domain: `what` (static storage)
  // names it.
  void waitFor(ShmCounter& flag, uint64_t target, int peer, const char* what);
  // Marks a wait of a send or receive for `peer` (-1: several) for its
  // scope.
  WaitScope markP2pWait(int peer, const char* what) {
    WaitLeg leg;
    leg.kind = WaitLeg::Kind::kDomain;
    leg.step = what;
    return WaitScope(marks_.waiting.get(), 0,
                     peer < 0 ? -1 : marks_.global(peer), leg);
  }
  // Waits until `flagOf(r)` reached `target` for every rank r.
  template <typename FlagOf>
  void waitAll(FlagOf flagOf, uint64_t target, const char* what) {
    for (int r = 0; r < nranks_; ++r) waitFor(flagOf(r), target, r, what);
  }

 private:
  struct Header {
    ShmCounter ready, done, freed;
  };
  struct Layout {
    size_t sentOffset, consumedOffset, boardOffset, p2pCallOffset, inputOffset,
        outputOffset, p2pOffset, total;
  };
  static Layout layoutFor(int nranks, const ShmSettings& settings);
  Header* header(int r) { return static_cast<Header*>(bases_[r]); }
  char* base(int r) { return static_cast<char*>(bases_[r]); }

  int rank_;
  int nranks_;
  ShmSettings settings_;
  const double timeoutSeconds_;
  std::shared_ptr<AbortSignal> abort_;
  std::shared_ptr<const PeerLiveness> liveness_;
  const WaitMarks marks_;
  Layout layout_;
  std::vector<ShmSegment> segments_;
  std::vector<void*> bases_;
  std::unique_ptr<CallBoard> board_;
  std::function<void()> whileWaiting_;
};

}  // namespace hetccl
