// The op traits table against NCCL's documented buffer sizes and roles.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "op/op_traits.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr OpKind kAllKinds[] = {
    OpKind::AllReduce,     OpKind::Broadcast, OpKind::Reduce, OpKind::AllGather,
    OpKind::ReduceScatter, OpKind::AlltoAll,  OpKind::Gather, OpKind::Scatter,
    OpKind::Send,          OpKind::Recv,
};

Op opOf(OpKind kind) {
  Op op;
  op.kind = kind;
  op.sendbuff = reinterpret_cast<const void*>(0x1000);
  op.recvbuff = reinterpret_cast<void*>(0x2000);
  op.count = 3;
  op.dtype = ncclFloat64;
  op.root = 1;
  return op;
}

// Bytes and use of both buffers on a root (rank 1) and a non-root (rank 0)
// of 4 ranks: count 3 of 8-byte elements, 24 bytes, 96 for all ranks.
struct Expected {
  OpKind kind;
  size_t sendBytes, recvBytes;
  bool sendAtRoot, sendElsewhere, recvAtRoot, recvElsewhere;
};

TEST(OpTraits, BufferSizesAndUsersAreNccls) {
  const Expected table[] = {
      {OpKind::AllReduce, 24, 24, true, true, true, true},
      {OpKind::Broadcast, 24, 24, true, false, true, true},
      {OpKind::Reduce, 24, 24, true, true, true, false},
      {OpKind::AllGather, 24, 96, true, true, true, true},
      {OpKind::ReduceScatter, 96, 24, true, true, true, true},
      {OpKind::AlltoAll, 96, 96, true, true, true, true},
      {OpKind::Gather, 24, 96, true, true, true, false},
      {OpKind::Scatter, 96, 24, true, false, true, true},
      {OpKind::Send, 24, 0, true, true, false, false},
      {OpKind::Recv, 0, 24, false, false, true, true},
  };
  for (const Expected& e : table) {
    Op op = opOf(e.kind);
    SCOPED_TRACE(opKindName(e.kind));
    EXPECT_EQ(sendSpan(op, 1, 4).bytes, e.sendBytes);
    EXPECT_EQ(recvSpan(op, 1, 4).bytes, e.recvBytes);
    EXPECT_EQ(sendSpan(op, 1, 4).used, e.sendAtRoot);
    EXPECT_EQ(sendSpan(op, 0, 4).used, e.sendElsewhere);
    EXPECT_EQ(recvSpan(op, 1, 4).used, e.recvAtRoot);
    EXPECT_EQ(recvSpan(op, 0, 4).used, e.recvElsewhere);
    EXPECT_EQ(sendSpan(op, 0, 4).pointer,
              static_cast<const char*>(op.sendbuff));
  }
}

TEST(OpTraits, RootsPeersAndReductions) {
  std::set<std::string> names;
  for (OpKind kind : kAllKinds) {
    const OpTraits& traits = opTraits(kind);
    names.insert(traits.name);
    EXPECT_FALSE(traits.hasRoot && traits.hasPeer) << traits.name;
    bool rooted = kind == OpKind::Broadcast || kind == OpKind::Reduce ||
                  kind == OpKind::Gather || kind == OpKind::Scatter;
    EXPECT_EQ(traits.hasRoot, rooted) << traits.name;
    bool p2p = kind == OpKind::Send || kind == OpKind::Recv;
    EXPECT_EQ(traits.hasPeer, p2p) << traits.name;
    EXPECT_EQ(isPointToPoint(kind), p2p) << traits.name;
    bool reduces = kind == OpKind::AllReduce || kind == OpKind::Reduce ||
                   kind == OpKind::ReduceScatter;
    EXPECT_EQ(traits.reduces, reduces) << traits.name;
  }
  EXPECT_EQ(names.size(), std::size(kAllKinds));  // one name per kind
  EXPECT_STREQ(opKindName(OpKind::ReduceScatter), "ReduceScatter");
}

// The columns the tools read (op/kinds/op_kinds.def): nccl-tests' names,
// and which calls NCCL defines in place.
TEST(OpTraits, ToolNamesAndInPlaceForms) {
  std::set<std::string> cliNames;
  for (OpKind kind : kAllKinds) {
    const OpTraits& traits = opTraits(kind);
    cliNames.insert(traits.cliName);
    bool inPlace = kind != OpKind::AlltoAll && kind != OpKind::Send &&
                   kind != OpKind::Recv;
    EXPECT_EQ(traits.hasInPlaceForm, inPlace) << traits.name;
  }
  EXPECT_EQ(cliNames.size(), std::size(kAllKinds));
  EXPECT_STREQ(opTraits(OpKind::ReduceScatter).cliName, "reducescatter");
  // Every kind of the enum has its row, and only those.
  EXPECT_EQ(op_kinds::kOpKindCount, std::size(kAllKinds));
  EXPECT_EQ(op_kinds::kCollectiveCount, std::size(kAllKinds) - 2);
  EXPECT_EQ(findOpTraits(static_cast<OpKind>(op_kinds::kOpKindCount)), nullptr);
}

TEST(OpTraits, AKindOutsideTheEnumIsAnInternalError) {
  try {
    opTraits(static_cast<OpKind>(99));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclInternalError);
  }
}

}  // namespace
}  // namespace hetccl
