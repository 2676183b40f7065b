// The inputs a GPU plan only reads, whose staged sends may start with the
// plan rather than after everything enqueued before them: an out-of-place
// op's input, never a buffer that an op of the plan writes.
#include <gtest/gtest.h>

#include <vector>

#include "engine/gpu/proxy/unchanged_inputs.h"

namespace hetccl {
namespace {

constexpr int kRank = 1;
constexpr int kRanks = 2;

Op opOf(OpKind kind, const void* send, void* recv, size_t count, int root = 0) {
  Op op;
  op.kind = kind;
  op.dtype = ncclFloat32;
  op.count = count;
  op.sendbuff = send;
  op.recvbuff = recv;
  op.root = root;
  return op;
}

TEST(UnchangedInputs, AnOutOfPlaceInputHoldsWithinItsBytesOnly) {
  std::vector<float> in(64), out(64);
  UnchangedInputs inputs;
  inputs.start({opOf(OpKind::AllReduce, in.data(), out.data(), 64)}, kRank,
               kRanks);
  EXPECT_TRUE(inputs.hold(in.data(), 64 * sizeof(float)));
  EXPECT_TRUE(inputs.hold(in.data() + 16, 8 * sizeof(float)));
  EXPECT_FALSE(inputs.hold(in.data() + 60, 8 * sizeof(float)))
      << "past the input's end";
  EXPECT_FALSE(inputs.hold(out.data(), sizeof(float)));
}

TEST(UnchangedInputs, AnInPlaceInputIsWrittenSoItDoesNotHold) {
  std::vector<float> buffer(64);
  UnchangedInputs inputs;
  inputs.start({opOf(OpKind::AllReduce, buffer.data(), buffer.data(), 64)},
               kRank, kRanks);
  EXPECT_FALSE(inputs.hold(buffer.data(), sizeof(float)));
  // An in-place all-gather's input is this rank's block of the output.
  inputs.start({opOf(OpKind::AllGather, buffer.data() + 32, buffer.data(), 32)},
               kRank, kRanks);
  EXPECT_FALSE(inputs.hold(buffer.data() + 32, sizeof(float)));
}

TEST(UnchangedInputs, ANewPlanForgetsThePreviousOnesInputs) {
  std::vector<float> first(8), second(8), out(8);
  UnchangedInputs inputs;
  inputs.start({opOf(OpKind::AllReduce, first.data(), out.data(), 8)}, kRank,
               kRanks);
  inputs.start({opOf(OpKind::AllReduce, second.data(), out.data(), 8)}, kRank,
               kRanks);
  EXPECT_FALSE(inputs.hold(first.data(), sizeof(float)));
  EXPECT_TRUE(inputs.hold(second.data(), sizeof(float)));
}

TEST(UnchangedInputs, AGroupsSendHoldsUnlessAReceiveOfTheGroupWritesIt) {
  std::vector<float> a(16), b(16), c(16);
  UnchangedInputs inputs;
  inputs.start({opOf(OpKind::Send, a.data(), nullptr, 16),
                opOf(OpKind::Send, b.data(), nullptr, 16),
                opOf(OpKind::Recv, nullptr, b.data() + 8, 4),
                opOf(OpKind::Recv, nullptr, c.data(), 16)},
               kRank, kRanks);
  EXPECT_TRUE(inputs.hold(a.data(), 16 * sizeof(float)));
  EXPECT_FALSE(inputs.hold(b.data(), sizeof(float)))
      << "a receive of the same group writes into this send's buffer";
}

TEST(UnchangedInputs, ABroadcastRootsInputHoldsAndOtherRanksHaveNone) {
  std::vector<float> in(8), out(8);
  UnchangedInputs inputs;
  inputs.start(
      {opOf(OpKind::Broadcast, in.data(), out.data(), 8, /*root=*/kRank)},
      kRank, kRanks);
  EXPECT_TRUE(inputs.hold(in.data(), 8 * sizeof(float)));
  inputs.start({opOf(OpKind::Broadcast, in.data(), out.data(), 8, /*root=*/0)},
               kRank, kRanks);
  EXPECT_FALSE(inputs.hold(in.data(), sizeof(float)))
      << "a rank other than the root reads no input";
}

}  // namespace
}  // namespace hetccl
