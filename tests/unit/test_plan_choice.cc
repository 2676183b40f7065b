// The choice of plan across domains (algo/plan_choice.h) at the edge of
// HETCCL_ONE_SHOT_MAX, what the decision log says of it, and the size
// classes the log remembers (op/decision_log.h).
#include <gtest/gtest.h>

#include <string>

#include "algo/pipeline.h"
#include "algo/plan_choice.h"
#include "op/decision_log.h"

namespace hetccl {
namespace {

PlanContext contextOf(int nranks, size_t oneShotMax, size_t chunk) {
  PlanContext ctx;
  ctx.nranks = nranks;
  ctx.oneShotMaxBytes = oneShotMax;
  ctx.chunkBytes = chunk;
  return ctx;
}

Op opOf(OpKind kind, size_t count) {
  Op op;
  op.kind = kind;
  op.count = count;
  op.dtype = ncclFloat32;
  return op;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PlanChoice, AllReduceIsOneShotUpToTheThresholdThenPipelined) {
  const PlanContext ctx = contextOf(2, 256, 4096);
  const PlanChoice at = choosePlan(ctx, opOf(OpKind::AllReduce, 64));
  EXPECT_EQ(at.plan, PlanChoice::Plan::OneShot);
  EXPECT_EQ(describePlan(ctx, at),
            "one-shot plan: buffer of 256 bytes <= HETCCL_ONE_SHOT_MAX=256");
  const PlanChoice above = choosePlan(ctx, opOf(OpKind::AllReduce, 65));
  EXPECT_EQ(above.plan, PlanChoice::Plan::Pipelined);
  EXPECT_EQ(above.chunks, 1u);
  EXPECT_EQ(above.chunkBytes, 260u);
  const PlanChoice large = choosePlan(ctx, opOf(OpKind::AllReduce, 4097));
  EXPECT_EQ(large.chunkElements, 1024u);
  EXPECT_EQ(large.chunks, 5u);
  EXPECT_EQ(describePlan(ctx, large),
            "pipelined plan: buffer of 16388 bytes > HETCCL_ONE_SHOT_MAX=256; "
            "5 chunk(s) of up to 4K bytes (HETCCL_CHUNK=4K)");
}

// The threshold is on the output of an all-gather and the input of a
// reduce-scatter: every rank's block, and a chunk spreads over all blocks.
TEST(PlanChoice, AllGatherAndReduceScatterMeasureTheirLargerBuffer) {
  const PlanContext ctx = contextOf(4, 256, 4096);
  EXPECT_EQ(choosePlan(ctx, opOf(OpKind::AllGather, 16)).plan,
            PlanChoice::Plan::OneShot);
  const PlanChoice gather = choosePlan(ctx, opOf(OpKind::AllGather, 17));
  EXPECT_EQ(gather.plan, PlanChoice::Plan::Pipelined);
  EXPECT_EQ(gather.chunkElements, 256u);
  EXPECT_TRUE(has(describePlan(ctx, gather), "output of 272 bytes > "))
      << describePlan(ctx, gather);
  const PlanChoice scatter = choosePlan(ctx, opOf(OpKind::ReduceScatter, 17));
  EXPECT_TRUE(has(describePlan(ctx, scatter), "input of 272 bytes > "))
      << describePlan(ctx, scatter);
}

// A reduce measures its buffer, as an all-reduce and a broadcast do.
TEST(PlanChoice, ReduceMeasuresItsBufferAndAllToAllIsDirect) {
  const PlanContext ctx = contextOf(2, 256, 4096);
  EXPECT_EQ(choosePlan(ctx, opOf(OpKind::Reduce, 64)).plan,
            PlanChoice::Plan::OneShot);
  const PlanChoice reduce = choosePlan(ctx, opOf(OpKind::Reduce, 65));
  EXPECT_EQ(reduce.plan, PlanChoice::Plan::Pipelined);
  EXPECT_TRUE(has(describePlan(ctx, reduce), "buffer of 260 bytes > "))
      << describePlan(ctx, reduce);
  const PlanChoice allToAll = choosePlan(ctx, opOf(OpKind::AlltoAll, 1));
  EXPECT_EQ(allToAll.plan, PlanChoice::Plan::Direct);
  EXPECT_TRUE(has(describePlan(ctx, allToAll), "direct transfers"));
}

// A point-to-point transfer across domains goes in pieces of the chunk's
// share per rank; a user's sends and receives never in pieces smaller than
// a link's (a quarter chunk) unless the whole transfer is: on 1,024 ranks
// a 16K share would cut a 1 GB send into 65,536 pieces. A collective that
// reaches every rank keeps the share, so a round stays within two chunks.
TEST(PointToPointPieces, TheRanksShareOfAChunkButAtLeastALinksPiece) {
  const size_t chunk = 16 << 20;
  const size_t gigabyte = size_t{1} << 30;
  for (bool fewPeers : {true, false}) {
    EXPECT_EQ(pointToPointPieceBytes(chunk, 2, gigabyte, fewPeers), chunk / 2);
    EXPECT_EQ(pointToPointPieceBytes(chunk, 4, gigabyte, fewPeers), chunk / 4);
    EXPECT_EQ(pointToPointPieceBytes(chunk, 1, gigabyte, fewPeers), chunk);
  }
  EXPECT_EQ(pointToPointPieceBytes(chunk, 1024, gigabyte, true), chunk / 4);
  EXPECT_EQ(pointToPointPieceBytes(chunk, 1024, 1 << 20, true), 1u << 20);
  EXPECT_EQ(pointToPointPieceBytes(chunk, 1024, 100, true), 16384u);
  EXPECT_EQ(pointToPointPieceBytes(chunk, 2, 0, true), chunk / 2);
  EXPECT_EQ(pointToPointPieceBytes(chunk, 1024, gigabyte, false), 16384u);
  EXPECT_EQ(pointToPointPieceBytes(chunk, 8192, gigabyte, false), 4096u);
}

// Classes end at powers of two, so "at most 32K" splits no class.
TEST(DecisionLog, SizeClassesRoundUpToPowersOfTwo) {
  EXPECT_EQ(DecisionLog::sizeClass(0), 0u);
  EXPECT_EQ(DecisionLog::sizeClass(1), 0u);
  EXPECT_EQ(DecisionLog::sizeClass(2), 1u);
  EXPECT_EQ(DecisionLog::sizeClass(3), 2u);
  EXPECT_EQ(DecisionLog::sizeClass(32768), 15u);
  EXPECT_EQ(DecisionLog::sizeClass(32769), 16u);
  EXPECT_EQ(DecisionLog::sizeClass(~size_t{0}), 63u);
}

}  // namespace
}  // namespace hetccl
