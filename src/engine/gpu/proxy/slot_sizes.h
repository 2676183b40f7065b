// How large a staging ring's slots are (staging_ring.h): none are pinned
// until a piece first needs one; then all of the ring's slots are pinned
// together as large as that piece (a power of two, at least a page), and
// pinned again, at least twice as large, when a larger piece comes; never
// past the link's largest piece. A link's rings are then as large as the
// pieces it has carried: an all-to-all's on many ranks are small
// (HETCCL_CHUNK / nranks), and slots of the largest piece for every peer
// pinned 64 MB per peer touched (2 directions x 8 slots x 4 MB),
// gigabytes per rank on a few hundred ranks. Growing the ring at once
// rather than slot by slot means that once a link carried its largest
// piece, nothing more is pinned, whichever slot a later piece takes.
//
// Only the sizes: the ring pins and keeps the memory, and the simulator
// (tools/sim) counts what a rank would pin with the same rule.
#pragma once

#include <cstddef>

namespace hetccl {

// Slots per staging ring: two chunks' worth of pieces each way per link,
// more than any plan stages to one peer before it waits for that peer.
constexpr size_t kStagingRingSlots = 8;

class SlotSizes {
 public:
  static constexpr size_t kSmallestSlot = 4096;

  SlotSizes(size_t largestPiece, size_t slots)
      : largest_(largestPiece), slots_(slots) {}

  size_t slots() const { return slots_; }
  // Each slot's size now; 0 before any piece.
  size_t slotBytes() const { return slotBytes_; }
  // The slot size the ring needs to hold a piece of `bytes` (at most the
  // largest piece); 0 where its slots hold them already. Throws
  // ncclInternalError for a piece larger than the largest.
  size_t sizeFor(size_t bytes) const;
  // The ring's slots are `size` (from sizeFor) from now on: once they are
  // pinned, so that a failed pinning leaves the ring as it was.
  void grow(size_t size) {
    slotBytes_ = size;
    pinned_ += slots_ * size;
  }
  // The slots of every size the ring has had: what it pins, since its
  // former memory stays (an earlier piece, or a captured graph, may use it).
  size_t pinnedBytes() const { return pinned_; }

 private:
  const size_t largest_;
  const size_t slots_;
  size_t slotBytes_ = 0;
  size_t pinned_ = 0;
};

}  // namespace hetccl
