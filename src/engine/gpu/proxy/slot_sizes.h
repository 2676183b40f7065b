// How large a staging ring's slots are (staging_ring.h): each slot is
// pinned when a piece first needs it, as large as that piece (a power of
// two, at least a page), and grows, at least twofold, when a later piece
// taking it is larger; never past the link's largest piece. A link's ring
// is then as large as the pieces it carries: an all-to-all's on many
// ranks are small (HETCCL_CHUNK / nranks), and slots of the largest piece
// for every peer would pin 64 MB per peer touched (2 directions x 8 slots
// x 4 MB), gigabytes per rank on a few hundred ranks.
//
// Only the sizes: the ring pins and keeps the memory, and the simulator
// (tools/sim) counts what a rank would pin with the same rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetccl {

// Slots per staging ring: two chunks' worth of pieces each way per link,
// more than any plan stages to one peer before it waits for that peer.
constexpr size_t kStagingRingSlots = 8;

class SlotSizes {
 public:
  static constexpr size_t kSmallestSlot = 4096;

  SlotSizes(size_t largestPiece, size_t slots)
      : largest_(largestPiece), sizes_(slots, 0) {}

  size_t slots() const { return sizes_.size(); }
  size_t slotOf(uint64_t piece) const { return piece % sizes_.size(); }
  size_t size(size_t slot) const { return sizes_[slot]; }
  // The size the slot of `piece` takes to hold `bytes` (at most the
  // largest piece), which it has from now on; 0 where it holds them
  // already. Throws ncclInternalError for a piece larger than the largest.
  size_t grow(uint64_t piece, size_t bytes);
  // Every size a slot has had, summed: what the ring pins, since a slot's
  // former memory stays (a piece before, or a captured graph, may use it).
  size_t pinnedBytes() const { return pinned_; }

 private:
  const size_t largest_;
  std::vector<size_t> sizes_;
  size_t pinned_ = 0;
};

}  // namespace hetccl
