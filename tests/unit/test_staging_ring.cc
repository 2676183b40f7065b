// A staging ring's slots are pinned as large as the pieces that take them
// (slot_sizes.h): a page at least, a power of two, at least twice their
// former size when they grow, never past the link's largest piece; a
// grown slot's former memory stays.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/gpu/proxy/staging_ring.h"
#include "runtime/host/emulated_device_module.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr size_t kLargest = 1 << 20;

TEST(SlotSizes, ASlotIsPinnedAsLargeAsItsFirstPieceAPageAtLeast) {
  SlotSizes sizes(kLargest, 8);
  EXPECT_EQ(sizes.grow(0, 1), 4096u);
  EXPECT_EQ(sizes.grow(1, 4097), 8192u);
  EXPECT_EQ(sizes.grow(2, 300000), 524288u);
  EXPECT_EQ(sizes.grow(3, kLargest), kLargest);
  EXPECT_EQ(sizes.pinnedBytes(), 4096u + 8192 + 524288 + kLargest);
  // Slots no piece took are not pinned.
  for (size_t slot = 4; slot < 8; ++slot) EXPECT_EQ(sizes.size(slot), 0u);
}

TEST(SlotSizes, ASlotGrowsOnlyForALargerPieceAndAtLeastTwofold) {
  SlotSizes sizes(kLargest, 2);
  EXPECT_EQ(sizes.grow(0, 5000), 8192u);
  EXPECT_EQ(sizes.grow(2, 8192), 0u) << "piece 2 takes slot 0, which holds it";
  EXPECT_EQ(sizes.grow(4, 8193), 16384u);
  EXPECT_EQ(sizes.grow(6, 16385), 32768u);
  EXPECT_EQ(sizes.size(0), 32768u);
  EXPECT_EQ(sizes.size(1), 0u);
  // Every former size stays pinned: at most twice the slot's size now.
  EXPECT_EQ(sizes.pinnedBytes(), 8192u + 16384 + 32768);
}

TEST(SlotSizes, NoSlotGrowsPastTheLargestPiece) {
  const size_t largest = 3 * 4096 + 100;  // not a power of two
  SlotSizes sizes(largest, 1);
  EXPECT_EQ(sizes.grow(0, 4097), 8192u);
  EXPECT_EQ(sizes.grow(1, largest), largest);
  try {
    sizes.grow(2, largest + 1);
    FAIL() << "a piece past the largest was given a slot";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclInternalError);
  }
}

TEST(StagingRing, AGrownSlotsFormerMemoryStaysWithItsBytes) {
  const DeviceModule& module = emulatedDeviceModule();
  StagingRings rings(module);
  StagingRing& ring = rings.make(kLargest, 2, rings.linkCounters());
  EXPECT_EQ(rings.pinnedBytes(), 0u);
  char* first = ring.slotFor(0, 100);
  std::memset(first, 7, 100);
  EXPECT_EQ(ring.slotFor(2, 4096), first) << "piece 2 fits slot 0 as it is";
  char* grown = ring.slotFor(4, 5000);
  EXPECT_NE(grown, first);
  // Piece 0 may still be in flight: its bytes are where they were.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(first[i], 7);
  std::memset(grown, 9, 5000);
  EXPECT_EQ(ring.slotFor(1, 1), ring.slotFor(3, 4096));
  EXPECT_EQ(rings.pinnedBytes(), 4096u + 8192 + 4096);
}

}  // namespace
}  // namespace hetccl
