// The receiving end of one direction of a shm link. Receives queue in
// posting order; progress() copies filled slots of the peer's ring into the
// front one and posts this rank's consumed counter, which frees the slots.
// Each chunk's header is checked against the receive: the same message
// number and the same size, or the direction breaks with
// ncclInvalidUsage and the mismatch is reported to the sender through this
// rank's counters. Empty messages carry no chunk: an empty receive
// completes as soon as it reaches the front of the queue, and a gap in the
// message numbers means the peer's message was empty.
#pragma once

#include <memory>

#include "transport/shm/shm_link_layout.h"
#include "transport/shm/shm_ring_end.h"

namespace hetccl {

class ShmRingReceiver {
 public:
  // `ring`: the peer's region for this rank (its slots and sent counter).
  // `ownControl`: this rank's counters about this direction.
  ShmRingReceiver(int rank, int peer, ShmRingView ring,
                  ShmLinkControl& ownControl);

  std::shared_ptr<ShmTransfer> post(void* data, size_t bytes);
  // Moves what it can without waiting; true if anything moved or ended.
  bool progress();
  size_t bytesReceived() const {
    return end_.bytes.load(std::memory_order_relaxed);
  }

 private:
  // Copies filled chunks into `transfer`; true once it is complete.
  bool pullChunks(ShmTransfer& transfer, bool& progressed);
  // Breaks the direction: the chunk at the head of the ring does not
  // belong to `transfer`, or has a different size.
  void reportMismatch(const ShmTransfer& transfer, const ShmSlotHeader& header);

  ShmRingEnd end_;
  ShmLinkControl& ownControl_;
};

}  // namespace hetccl
