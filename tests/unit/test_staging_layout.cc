// How GPU ranks of heterogeneous communicators stage their buffers: what is
// copied in and out, and where the host ops point.
#include <gtest/gtest.h>

#include <vector>

#include "engine/gpu/staging_layout.h"

namespace hetccl {
namespace {

constexpr int kRanks = 3;

// Fake device addresses: only their values and distances matter.
const char* device(size_t offset) {
  return reinterpret_cast<const char*>(0x7f0000000000ull + offset);
}

Op makeOp(OpKind kind, size_t sendOffset, size_t recvOffset, size_t count,
          int root = 0) {
  Op op;
  op.kind = kind;
  op.sendbuff = device(sendOffset);
  op.recvbuff = const_cast<char*>(device(recvOffset));
  op.count = count;
  op.dtype = ncclFloat32;
  op.root = root;
  return op;
}

struct Staged {
  std::vector<char> memory;
  StagedOps ops;
};

Staged stage(const std::vector<Op>& ops, int rank) {
  Staged staged;
  staged.memory.resize(stagingBytes(ops, rank, kRanks));
  staged.ops = stageOps(ops, rank, kRanks, staged.memory.data());
  return staged;
}

bool inside(const Staged& staged, const void* pointer, size_t bytes) {
  const char* p = static_cast<const char*>(pointer);
  return p >= staged.memory.data() &&
         p + bytes <= staged.memory.data() + staged.memory.size();
}

TEST(StagingLayout, OutOfPlaceAllReduceCopiesBothWays) {
  Staged s = stage({makeOp(OpKind::AllReduce, 0, 1 << 20, 1001)}, 1);
  ASSERT_EQ(s.ops.copiesIn.size(), 1u);
  ASSERT_EQ(s.ops.copiesOut.size(), 1u);
  const Op& host = s.ops.hostOps[0];
  EXPECT_EQ(s.ops.copiesIn[0].src, device(0));
  EXPECT_EQ(s.ops.copiesIn[0].dst, host.sendbuff);
  EXPECT_EQ(s.ops.copiesIn[0].bytes, 4004u);
  EXPECT_EQ(s.ops.copiesOut[0].dst, device(1 << 20));
  EXPECT_EQ(s.ops.copiesOut[0].src, host.recvbuff);
  EXPECT_NE(host.sendbuff, host.recvbuff);
  EXPECT_TRUE(inside(s, host.sendbuff, 4004));
  EXPECT_TRUE(inside(s, host.recvbuff, 4004));
}

TEST(StagingLayout, InPlaceOpsShareStaging) {
  Staged s = stage({makeOp(OpKind::AllReduce, 64, 64, 7)}, 0);
  EXPECT_EQ(s.ops.hostOps[0].sendbuff, s.ops.hostOps[0].recvbuff);
}

TEST(StagingLayout, InPlaceAllGatherKeepsTheRanksOffset) {
  const int rank = 2;
  const size_t count = 5;
  Op op = makeOp(OpKind::AllGather, rank * count * 4, 0, count);
  Staged s = stage({op}, rank);
  const Op& host = s.ops.hostOps[0];
  EXPECT_EQ(static_cast<const char*>(host.sendbuff),
            static_cast<char*>(host.recvbuff) + rank * count * 4);
  ASSERT_EQ(s.ops.copiesIn.size(), 1u);
  EXPECT_EQ(s.ops.copiesIn[0].bytes, count * 4);
  ASSERT_EQ(s.ops.copiesOut.size(), 1u);
  EXPECT_EQ(s.ops.copiesOut[0].bytes, kRanks * count * 4);
  EXPECT_TRUE(inside(s, host.recvbuff, kRanks * count * 4));
}

TEST(StagingLayout, InPlaceReduceScatterCopiesOutOnlyTheRanksPart) {
  const int rank = 1;
  const size_t count = 9;
  Op op = makeOp(OpKind::ReduceScatter, 0, rank * count * 4, count);
  Staged s = stage({op}, rank);
  const Op& host = s.ops.hostOps[0];
  EXPECT_EQ(static_cast<char*>(host.recvbuff),
            static_cast<const char*>(host.sendbuff) + rank * count * 4);
  EXPECT_EQ(s.ops.copiesIn[0].bytes, kRanks * count * 4);
  EXPECT_EQ(s.ops.copiesOut[0].bytes, count * 4);
  EXPECT_EQ(s.ops.copiesOut[0].dst, device(rank * count * 4));
}

TEST(StagingLayout, RootedOpsTouchOnlyWhatTheRankUses) {
  // A non-root's broadcast input is not read; its result is written.
  Staged broadcast = stage({makeOp(OpKind::Broadcast, 0, 4096, 10, 0)}, 1);
  EXPECT_TRUE(broadcast.ops.copiesIn.empty());
  EXPECT_EQ(broadcast.ops.copiesOut.size(), 1u);
  // A non-root's reduce output stays untouched, as with NCCL.
  Staged reduce = stage({makeOp(OpKind::Reduce, 0, 4096, 10, 0)}, 2);
  EXPECT_EQ(reduce.ops.copiesIn.size(), 1u);
  EXPECT_TRUE(reduce.ops.copiesOut.empty());
  Staged gatherRoot = stage({makeOp(OpKind::Gather, 0, 4096, 10, 2)}, 2);
  EXPECT_EQ(gatherRoot.ops.copiesOut[0].bytes, kRanks * 10 * 4u);
  Staged scatter = stage({makeOp(OpKind::Scatter, 0, 4096, 10, 0)}, 1);
  EXPECT_TRUE(scatter.ops.copiesIn.empty());
}

TEST(StagingLayout, NullBuffersOfNonRootsAreNotCopied) {
  Op op = makeOp(OpKind::Broadcast, 0, 4096, 10, 0);
  op.sendbuff = nullptr;
  Staged s = stage({op}, 1);
  EXPECT_TRUE(s.ops.copiesIn.empty());
  EXPECT_NE(s.ops.hostOps[0].sendbuff, nullptr);
}

TEST(StagingLayout, GroupsOfPointToPointOpsGetSeparateStaging) {
  std::vector<Op> ops = {makeOp(OpKind::Send, 0, 0, 100, 1),
                         makeOp(OpKind::Recv, 0, 8192, 100, 2),
                         makeOp(OpKind::Recv, 0, 16384, 3, 0)};
  Staged s = stage(ops, 0);
  ASSERT_EQ(s.ops.copiesIn.size(), 1u);
  ASSERT_EQ(s.ops.copiesOut.size(), 2u);
  EXPECT_NE(s.ops.hostOps[1].recvbuff, s.ops.hostOps[2].recvbuff);
  EXPECT_TRUE(inside(s, s.ops.hostOps[2].recvbuff, 12));
  for (const Op& host : s.ops.hostOps)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(host.recvbuff) % 256,
              reinterpret_cast<uintptr_t>(s.memory.data()) % 256);
}

TEST(StagingLayout, DeviceScalarTravelsWithTheOp) {
  Op op = makeOp(OpKind::AllReduce, 0, 4096, 10);
  op.reduce.preMultiply = true;
  op.reduce.scalarPointer = device(1 << 16);
  Staged s = stage({op}, 0);
  ASSERT_EQ(s.ops.copiesIn.size(), 2u);
  EXPECT_EQ(s.ops.copiesIn[1].src, device(1 << 16));
  EXPECT_EQ(s.ops.copiesIn[1].bytes, 4u);
  EXPECT_EQ(s.ops.hostOps[0].reduce.scalarPointer, s.ops.copiesIn[1].dst);
}

TEST(StagingLayout, EmptyOpsNeedNoCopies) {
  Staged s = stage({makeOp(OpKind::AllReduce, 0, 4096, 0)}, 0);
  EXPECT_TRUE(s.ops.copiesIn.empty());
  EXPECT_TRUE(s.ops.copiesOut.empty());
}

}  // namespace
}  // namespace hetccl
