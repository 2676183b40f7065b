// LanePlacement: how tcp, ucx and net links cut and place transfers.
#include "transport/lane_placement.h"

#include <gtest/gtest.h>

#include <cstddef>

namespace hetccl {
namespace {

constexpr size_t kMin = 128 * 1024;

// Parts of at least the minimum, one per lane at most.
TEST(LanePlacement, PartsOfAtLeastTheMinimumOnePerLaneAtMost) {
  const LanePlacement four(0, 1, 4, kMin);
  EXPECT_EQ(1u, four.partsOf(0));
  EXPECT_EQ(1u, four.partsOf(2 * kMin - 1));
  EXPECT_EQ(2u, four.partsOf(2 * kMin));
  EXPECT_EQ(3u, four.partsOf(4 * kMin - 1));
  EXPECT_EQ(4u, four.partsOf(4 * kMin));
  EXPECT_EQ(4u, four.partsOf(size_t{1} << 30));
  EXPECT_EQ(1u, LanePlacement(0, 1, 1, kMin).partsOf(size_t{1} << 30));
}

// With a largest part, large transfers take several parts per lane, and
// transfers of up to a part per lane are cut as without it.
TEST(LanePlacement, PartsOfAtMostTheMaximumBeyondAPartPerLane) {
  constexpr size_t kMax = 1 << 20;
  const LanePlacement three(2, 5, 3, kMin, kMax);
  EXPECT_EQ(1u, three.partsOf(kMin));
  EXPECT_EQ(2u, three.partsOf(2 * kMin));
  EXPECT_EQ(3u, three.partsOf(3 * kMax));
  EXPECT_EQ(4u, three.partsOf(3 * kMax + 1));
  EXPECT_EQ(64u, three.partsOf(64 * kMax));
  EXPECT_EQ(2u, LanePlacement(0, 1, 1, kMin, kMax).partsOf(kMax + 1));
}

// Every transfer's first part is on the pair's home lane, the same at
// both ends; the next parts follow it round the lanes.
TEST(LanePlacement, PartsStartOnTheHomeLaneBothEndsAgreeOn) {
  for (int rank = 0; rank < 5; ++rank)
    for (int peer = 0; peer < 5; ++peer) {
      const LanePlacement here(rank, peer, 3, kMin);
      const LanePlacement there(peer, rank, 3, kMin);
      EXPECT_EQ(here.home(), there.home());
      EXPECT_EQ(here.home(), here.laneOf(0));
      for (size_t part = 0; part < 7; ++part)
        EXPECT_EQ((here.home() + part) % 3, there.laneOf(part));
    }
  EXPECT_EQ(0u, LanePlacement(3, 4, 1, kMin).laneOf(5));
}

// placePiece: a transfer on its own is cut as partsOf says, from the home
// lane; piece i of a larger transfer that partsOf would cut goes whole
// from lane home + i (round the lanes), in parts of at most the largest
// part, and both ends place it alike. A piece of one (the only piece) is a
// transfer on its own, and so is a piece partsOf would not cut.
TEST(LanePlacement, PiecesOfOneTransferGoWholeToTheLanesInTurn) {
  constexpr size_t kMax = 1 << 20;
  for (int rank = 0; rank < 4; ++rank)
    for (int peer = 0; peer < 4; ++peer) {
      const LanePlacement here(rank, peer, 3, kMin, kMax);
      const LanePlacement there(peer, rank, 3, kMin, kMax);
      for (size_t bytes : {size_t{0}, kMin, 3 * kMin, 4 * kMax}) {
        const auto lone = here.placePiece(bytes, TransferPiece{});
        EXPECT_EQ(here.partsOf(bytes), lone.count) << bytes;
        EXPECT_EQ(here.home(), lone.firstLane) << bytes;
        EXPECT_EQ(here.home(), here.placePiece(bytes, {0, 1}).firstLane);
      }
      for (uint32_t index = 0; index < 7; ++index) {
        const TransferPiece piece{index, 7};
        const auto placed = here.placePiece(3 * kMin, piece);
        EXPECT_EQ(1u, placed.count) << "piece " << index;
        EXPECT_EQ((here.home() + index) % 3, placed.firstLane);
        EXPECT_EQ(placed.firstLane,
                  there.placePiece(3 * kMin, piece).firstLane);
        EXPECT_EQ((placed.firstLane + 1) % 3, placed.laneOf(1, 3));
      }
      EXPECT_EQ(1u, here.placePiece(kMax, {1, 2}).count);
      EXPECT_EQ(2u, here.placePiece(kMax + 1, {1, 2}).count);
      EXPECT_EQ(1u, here.placePiece(0, {1, 2}).count);
      for (size_t uncut : {size_t{0}, kMin, 2 * kMin - 1})
        EXPECT_EQ(here.home(), here.placePiece(uncut, {2, 3}).firstLane);
    }
  const LanePlacement unbounded(0, 1, 4, kMin);
  EXPECT_EQ(1u, unbounded.placePiece(size_t{1} << 30, {2, 3}).count);
  EXPECT_EQ(3u, unbounded.placePiece(size_t{1} << 30, {2, 3}).firstLane);
}

// Ranks of 8 cores or more cut into 64 KiB parts by default, fewer keep
// what their link takes below that.
TEST(LanePlacement, TheSmallestPartFollowsTheCores) {
  constexpr size_t kFew = 256 * 1024;
  EXPECT_EQ(kFew, smallestPartForCores(1, kFew));
  EXPECT_EQ(kFew, smallestPartForCores(kManyCores - 1, kFew));
  EXPECT_EQ(kManyCoresSplitBytes, smallestPartForCores(kManyCores, kFew));
  EXPECT_EQ(kManyCoresSplitBytes, smallestPartForCores(256, kFew));
}

}  // namespace
}  // namespace hetccl
