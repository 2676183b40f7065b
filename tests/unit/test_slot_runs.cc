// Which pieces of a staged transfer one staging copy takes together
// (slot_runs.h): pieces whose slots follow each other at an even stride,
// at most the setting's count, a send's first piece and a receive's last
// one alone, a new run wherever the ring wraps; back to back as one plain
// copy, in slots larger than the pieces as rows of a 2D copy.
#include <gtest/gtest.h>

#include <vector>

#include "engine/gpu/proxy/slot_runs.h"

namespace hetccl {
namespace {

constexpr size_t kSlot = 1 << 20;
constexpr size_t kSlots = 8;

// Pieces of `bytes` (the last `last` bytes) from ring slot `firstSlot`
// on, in a ring of kSlots slots of `slotBytes`.
std::vector<StagedPiece> piecesFrom(std::vector<char>& ring, size_t firstSlot,
                                    size_t count, size_t bytes, size_t last,
                                    size_t slotBytes = kSlot) {
  std::vector<StagedPiece> pieces;
  for (size_t i = 0; i < count; ++i)
    pieces.push_back(
        StagedPiece{ring.data() + (firstSlot + i) % kSlots * slotBytes,
                    i + 1 == count ? last : bytes});
  return pieces;
}

struct Span {
  size_t first, count, offset, bytes;
  bool operator==(const Span& o) const {
    return first == o.first && count == o.count && offset == o.offset &&
           bytes == o.bytes;
  }
};

std::vector<Span> runsOf(const std::vector<StagedPiece>& pieces,
                         size_t maxPieces, RunEdge alone) {
  std::vector<Span> runs;
  for (const SlotRun& r : slotRuns(pieces, maxPieces, alone))
    runs.push_back(Span{r.first, r.count, r.offset, r.bytes});
  return runs;
}

class SlotRuns : public testing::Test {
 protected:
  std::vector<char> ring = std::vector<char>(kSlots * kSlot);
};

TEST_F(SlotRuns, ASendsFirstPieceGoesAloneAndTheRestInRunsOfTheMost) {
  const auto pieces = piecesFrom(ring, 0, 8, kSlot, kSlot);
  EXPECT_EQ(runsOf(pieces, 4, RunEdge::kFirstAlone),
            (std::vector<Span>{{0, 1, 0, kSlot},
                               {1, 4, kSlot, 4 * kSlot},
                               {5, 3, 5 * kSlot, 3 * kSlot}}));
}

TEST_F(SlotRuns, AReceivesLastPieceGoesAlone) {
  const auto pieces = piecesFrom(ring, 0, 4, kSlot, 100);
  EXPECT_EQ(runsOf(pieces, 4, RunEdge::kLastAlone),
            (std::vector<Span>{{0, 3, 0, 3 * kSlot}, {3, 1, 3 * kSlot, 100}}));
}

TEST_F(SlotRuns, AShorterLastPieceJoinsASendsRun) {
  const auto pieces = piecesFrom(ring, 4, 4, kSlot, 7);
  EXPECT_EQ(
      runsOf(pieces, 4, RunEdge::kFirstAlone),
      (std::vector<Span>{{0, 1, 0, kSlot}, {1, 3, kSlot, 2 * kSlot + 7}}));
}

TEST_F(SlotRuns, TheRingsWrapStartsANewRun) {
  // Slots 6, 7, then 0, 1, 2.
  const auto pieces = piecesFrom(ring, 6, 5, kSlot, kSlot);
  EXPECT_EQ(runsOf(pieces, 4, RunEdge::kFirstAlone),
            (std::vector<Span>{{0, 1, 0, kSlot},
                               {1, 1, kSlot, kSlot},
                               {2, 3, 2 * kSlot, 3 * kSlot}}));
  EXPECT_EQ(runsOf(pieces, 4, RunEdge::kLastAlone),
            (std::vector<Span>{{0, 2, 0, 2 * kSlot},
                               {2, 2, 2 * kSlot, 2 * kSlot},
                               {4, 1, 4 * kSlot, kSlot}}));
}

// Pieces a byte or a page short of their slots (a ring that once carried
// larger pieces) go as 2D runs, a row per slot; a shorter last piece
// cannot be a row of them and goes alone.
TEST_F(SlotRuns, PiecesShorterThanTheirSlotsGoAsRows) {
  for (size_t bytes : {kSlot - 1, kSlot - 4096, kSlot / 2}) {
    const auto pieces = piecesFrom(ring, 0, 4, bytes, bytes);
    const auto sends = slotRuns(pieces, 4, RunEdge::kFirstAlone);
    ASSERT_EQ(sends.size(), 2u) << bytes;
    EXPECT_TRUE(sends[0].plain());
    EXPECT_EQ(sends[1].first, 1u);
    EXPECT_EQ(sends[1].count, 3u);
    EXPECT_EQ(sends[1].offset, bytes);
    EXPECT_EQ(sends[1].bytes, 3 * bytes);
    EXPECT_EQ(sends[1].width, bytes);
    EXPECT_EQ(sends[1].pitch, kSlot);
    EXPECT_FALSE(sends[1].plain());
    const auto receives = slotRuns(pieces, 4, RunEdge::kLastAlone);
    ASSERT_EQ(receives.size(), 2u) << bytes;
    EXPECT_EQ(receives[0].count, 3u);
    EXPECT_EQ(receives[0].pitch, kSlot);
    EXPECT_FALSE(receives[0].plain());

    const auto shortLast = piecesFrom(ring, 0, 4, bytes, 100);
    EXPECT_EQ(runsOf(shortLast, 4, RunEdge::kFirstAlone),
              (std::vector<Span>{{0, 1, 0, bytes},
                                 {1, 2, bytes, 2 * bytes},
                                 {3, 1, 3 * bytes, 100}}));
  }
}

TEST_F(SlotRuns, OnePiecePerCopyWhereTheSettingSaysSo) {
  const auto pieces = piecesFrom(ring, 0, 6, kSlot, kSlot);
  const auto runs = runsOf(pieces, 1, RunEdge::kLastAlone);
  ASSERT_EQ(runs.size(), 6u);
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(runs[i], (Span{i, 1, i * kSlot, kSlot}));
}

TEST_F(SlotRuns, OneOrTwoPiecesAndNone) {
  EXPECT_TRUE(runsOf({}, 4, RunEdge::kFirstAlone).empty());
  const auto one = piecesFrom(ring, 3, 1, 10, 10);
  EXPECT_EQ(runsOf(one, 4, RunEdge::kFirstAlone),
            (std::vector<Span>{{0, 1, 0, 10}}));
  EXPECT_EQ(runsOf(one, 4, RunEdge::kLastAlone),
            (std::vector<Span>{{0, 1, 0, 10}}));
  const auto two = piecesFrom(ring, 0, 2, kSlot, 5);
  EXPECT_EQ(runsOf(two, 4, RunEdge::kFirstAlone).size(), 2u);
  EXPECT_EQ(runsOf(two, 4, RunEdge::kLastAlone).size(), 2u);
}

// Every byte is in exactly one run, in order, and no run passes the most.
TEST_F(SlotRuns, RunsCoverEveryPieceOnceInOrder) {
  for (size_t first = 0; first < kSlots; ++first)
    for (size_t count = 1; count <= 20; ++count)
      for (size_t most = 1; most <= 4; ++most)
        for (RunEdge edge : {RunEdge::kFirstAlone, RunEdge::kLastAlone}) {
          const auto pieces = piecesFrom(ring, first, count, kSlot, 3);
          size_t next = 0, offset = 0;
          for (const SlotRun& run : slotRuns(pieces, most, edge)) {
            EXPECT_EQ(run.first, next);
            EXPECT_EQ(run.offset, offset);
            EXPECT_GE(run.count, 1u);
            EXPECT_LE(run.count, most);
            EXPECT_TRUE(run.plain());
            EXPECT_EQ(pieces[run.first].slot + run.bytes,
                      pieces[run.first + run.count - 1].slot +
                          pieces[run.first + run.count - 1].bytes);
            next += run.count;
            offset += run.bytes;
          }
          EXPECT_EQ(next, count);
          EXPECT_EQ(offset, (count - 1) * kSlot + 3);
        }
}

// Runs only from `runsFrom` pieces waiting for the staging stream on; 0
// means whatever the lag.
TEST(RunLength, RunsFromTheLagSetOn) {
  EXPECT_EQ(runLength(4, 64, 0), 1u);
  EXPECT_EQ(runLength(4, 64, 63), 1u);
  EXPECT_EQ(runLength(4, 64, 64), 4u);
  EXPECT_EQ(runLength(4, 64, 1000), 4u);
  EXPECT_EQ(runLength(3, 0, 0), 3u);
  EXPECT_EQ(runLength(1, 0, 500), 1u);
}

}  // namespace
}  // namespace hetccl
