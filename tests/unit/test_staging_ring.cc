// A staging ring's slots are pinned as large as the pieces that take them
// (slot_sizes.h): all of them at once, at the first piece, a power of two
// and a page at least; again, at least twice as large, for a larger piece;
// never past the link's largest piece. The former memory stays.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/gpu/proxy/staging_ring.h"
#include "runtime/host/emulated_device_module.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr size_t kLargest = 1 << 20;

// What the ring does for a piece of `bytes`: the slots' new size (0: none).
size_t take(SlotSizes& sizes, size_t bytes) {
  const size_t size = sizes.sizeFor(bytes);
  if (size > 0) sizes.grow(size);
  return size;
}

TEST(SlotSizes, TheSlotsArePinnedAsLargeAsTheFirstPieceAPageAtLeast) {
  SlotSizes sizes(kLargest, 8);
  EXPECT_EQ(sizes.slotBytes(), 0u);
  EXPECT_EQ(sizes.pinnedBytes(), 0u);
  EXPECT_EQ(take(sizes, 1), 4096u);
  EXPECT_EQ(sizes.pinnedBytes(), 8 * 4096u);
  SlotSizes larger(kLargest, 8);
  EXPECT_EQ(take(larger, 300000), 524288u);
}

TEST(SlotSizes, TheyGrowOnlyForALargerPieceAndAtLeastTwofold) {
  SlotSizes sizes(kLargest, 2);
  EXPECT_EQ(take(sizes, 5000), 8192u);
  EXPECT_EQ(take(sizes, 8192), 0u) << "the slots hold it as they are";
  EXPECT_EQ(take(sizes, 100), 0u);
  EXPECT_EQ(take(sizes, 8193), 16384u);
  EXPECT_EQ(take(sizes, 16385), 32768u);
  EXPECT_EQ(sizes.slotBytes(), 32768u);
  // Every former size stays pinned: at most twice the slots' size now.
  EXPECT_EQ(sizes.pinnedBytes(), 2 * (8192u + 16384 + 32768));
}

TEST(SlotSizes, NoneGrowsPastTheLargestPiece) {
  const size_t largest = 3 * 4096 + 100;  // not a power of two
  SlotSizes sizes(largest, 1);
  EXPECT_EQ(take(sizes, 4097), 8192u);
  EXPECT_EQ(take(sizes, largest), largest);
  try {
    take(sizes, largest + 1);
    FAIL() << "a piece past the largest was given a slot";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclInternalError);
  }
}

TEST(StagingRing, AGrownRingsFormerSlotsStayWithTheirBytes) {
  const DeviceModule& module = emulatedDeviceModule();
  StagingRings rings(module);
  StagingRing& ring = rings.make(kLargest, 2, rings.linkCounters());
  EXPECT_EQ(rings.pinnedBytes(), 0u);
  char* first = ring.slotFor(0, 100);
  std::memset(first, 7, 100);
  char* second = ring.slotFor(1, 4096);
  EXPECT_EQ(second, first + 4096) << "piece 1 fits its slot as it is";
  char* grown = ring.slotFor(2, 5000);
  EXPECT_NE(grown, first);
  // Piece 0 may still be in flight: its bytes are where they were.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(first[i], 7);
  std::memset(grown, 9, 5000);
  EXPECT_EQ(ring.slotFor(3, 1), grown + 8192);
  EXPECT_EQ(rings.pinnedBytes(), 2 * (4096u + 8192));
}

}  // namespace
}  // namespace hetccl
