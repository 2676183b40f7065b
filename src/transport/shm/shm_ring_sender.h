// The sending end of one direction of a shm link. Transfers queue in
// posting order; progress() cuts the front one into chunks, writes each
// into a free slot of this rank's ring (with a header naming the message,
// its size and its call) and posts the sent counter. A slot is free once
// the peer's consumed counter shows it read the chunk that used the slot
// before. A send is complete once its last chunk is in the ring: its
// buffer may be reused. The peer's reports (a size mismatch, calls that
// disagree) break the direction; a disagreement also raises the abort
// signal, since it may come after every send of the call completed.
#pragma once

#include <memory>

#include "transport/shm/shm_link_layout.h"
#include "transport/shm/shm_ring_end.h"
#include "util/abort_signal.h"

namespace hetccl {

class ShmRingSender {
 public:
  // `ring`: this rank's region for `peer` (slots and the sent counter).
  // `peerControl`: the peer's counters about this direction (how far it
  // consumed, and its reports). `abort`: raised when the peer reports
  // calls that disagree.
  ShmRingSender(int rank, int peer, ShmRingView ring,
                ShmLinkControl& peerControl, AbortSignal& abort);

  std::shared_ptr<ShmTransfer> post(const void* data, size_t bytes,
                                    const CallSignature& call);
  // Moves what it can without waiting; true if anything moved or ended.
  bool progress();
  // Whether a posted transfer waits to be moved (under the engine's lock).
  bool pending() const { return !end_.queue.empty(); }
  size_t bytesSent() const {
    return end_.bytes.load(std::memory_order_relaxed);
  }

 private:
  // Copies chunks of `transfer` while slots are free; true once all of it
  // is in the ring.
  bool pushChunks(ShmTransfer& transfer, bool& progressed);
  // Breaks the direction if the peer reported a size mismatch or calls
  // that disagree.
  void checkPeerReports();

  ShmRingEnd end_;
  ShmLinkControl& peerControl_;
  AbortSignal& abort_;
};

}  // namespace hetccl
