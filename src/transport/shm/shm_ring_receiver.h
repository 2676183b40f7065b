// The receiving end of one direction of a shm link. Receives queue in
// posting order; progress() copies filled slots of the peer's ring into the
// front one and posts this rank's consumed counter, which frees the slots.
// Each chunk's header is checked against the receive: first that the
// calls agree, then the same message number and the same size; otherwise
// the direction breaks with ncclInvalidUsage and the problem is reported
// to the sender through this rank's counters (calls that disagree also
// raise the abort signal). Empty messages carry no chunk: an empty receive
// completes as soon as it reaches the front of the queue, and a gap in the
// message numbers means the peer's message was empty.
#pragma once

#include <atomic>

#include <memory>

#include "op/call_log.h"
#include "transport/shm/shm_link_layout.h"
#include "transport/shm/shm_ring_end.h"
#include "util/abort_signal.h"

namespace hetccl {

class ShmRingReceiver {
 public:
  // `ring`: the peer's region for this rank (its slots and sent counter).
  // `ownControl`: this rank's counters about this direction. `abort`:
  // raised on calls that disagree. `calls`: this rank's calls, for
  // checkUnclaimed (null: not checked).
  ShmRingReceiver(int rank, int peer, ShmRingView ring,
                  ShmLinkControl& ownControl, AbortSignal& abort,
                  std::shared_ptr<const CallLog> calls);

  std::shared_ptr<ShmTransfer> post(void* data, size_t bytes,
                                    const CallSignature& call);
  // A receive that combines each chunk with `local` into `data` as it
  // arrives (Link::recvReduce).
  std::shared_ptr<ShmTransfer> postCombining(void* data, const void* local,
                                             size_t bytes,
                                             const ReceiveCombine& combine,
                                             const CallSignature& call);
  // Moves what it can without waiting; true if anything moved or ended.
  bool progress();
  // With no receive posted: compares the call of the peer's next message,
  // if it is there, with this rank's call of the same number, which may
  // never receive it (ranks that disagree on a broadcast's root).
  void checkUnclaimed();
  size_t bytesReceived() const {
    return end_.bytes.load(std::memory_order_relaxed);
  }
  // Whether a posted transfer waits to be moved (under the engine's lock).
  bool pending() const { return !end_.queue.empty(); }
  // The latest collective a chunk of the peer's belonged to
  // (Link::latestCallFrom). Any thread.
  uint64_t latestCall() const {
    return latestCall_.load(std::memory_order_relaxed);
  }

 private:
  // Copies filled chunks into `transfer` (or combines them into it); true
  // once it is complete.
  bool pullChunks(ShmTransfer& transfer, bool& progressed);
  // Puts `n` bytes of a chunk into `transfer` where it has moved to: a
  // copy, or the combination with its local buffer.
  static void deliver(ShmTransfer& transfer, const char* chunk, size_t n);
  // Breaks the direction: the chunk at the head of the ring does not
  // belong to `transfer`, or has a different size.
  void reportMismatch(const ShmTransfer& transfer, const ShmSlotHeader& header);
  // Breaks the direction and raises the abort signal: the peer's message
  // belongs to `sent`, this rank's receive to `posted`.
  void reportDisagreement(const CallSignature& sent,
                          const CallSignature& posted);

  ShmRingEnd end_;
  ShmLinkControl& ownControl_;
  AbortSignal& abort_;
  const std::shared_ptr<const CallLog> calls_;
  std::atomic<uint64_t> latestCall_{0};
};

}  // namespace hetccl
