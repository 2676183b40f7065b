// What either end of one direction of a shm link keeps: which ranks it
// joins, the ring, the queue of posted transfers and how much has moved.
// ShmRingSender and ShmRingReceiver each hold one, beside the counters only
// their side reads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transport/shm/shm_link_layout.h"
#include "transport/shm/shm_transfer_queue.h"

namespace hetccl {

struct ShmRingEnd {
  ShmRingEnd(int rank, int peer, ShmRingView ring)
      : rank(rank), peer(peer), ring(ring) {}

  const int rank;
  const int peer;
  const ShmRingView ring;
  ShmTransferQueue queue;
  uint64_t chunks = 0;           // chunks moved through the ring so far
  std::atomic<size_t> bytes{0};  // payload bytes moved so far
};

}  // namespace hetccl
