// What the checks of calls that disagree build on: a rank's log of its
// collective calls (found by number while kept, sends and receives not
// kept), the signature's wire form, and one wording of a disagreement
// whichever rank reports it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "op/call_disagreement.h"
#include "op/call_log.h"

namespace hetccl {
namespace {

CallSignature collective(uint64_t sequence, uint64_t count) {
  CallSignature call;
  call.sequence = sequence;
  call.count = count;
  call.call = OpKind::AllReduce;
  call.dtype = ncclFloat32;
  call.redOp = ncclSum;
  return call;
}

TEST(CallLog, FindsTheCallsItKeepsByNumber) {
  CallLog log;
  EXPECT_FALSE(log.made(1));
  EXPECT_FALSE(log.find(1));
  for (uint64_t n = 1; n <= 3; ++n) log.record(collective(n, 100 * n));
  EXPECT_TRUE(log.made(3));
  EXPECT_FALSE(log.made(4));
  ASSERT_TRUE(log.find(2));
  EXPECT_EQ(log.find(2)->count, 200u);
}

TEST(CallLog, KeepsOnlyTheLatestCalls) {
  CallLog log;
  const uint64_t last = 3 * CallLog::kKept;
  for (uint64_t n = 1; n <= last; ++n) log.record(collective(n, n));
  EXPECT_FALSE(log.find(last - CallLog::kKept));
  ASSERT_TRUE(log.find(last - CallLog::kKept + 1));
  EXPECT_EQ(log.find(last)->count, last);
  EXPECT_TRUE(log.made(1));  // made, though no longer kept
}

// Each always meets the peer's receive or send, which compares it.
TEST(CallLog, SendsAndReceivesAreNotKept) {
  CallLog log;
  CallSignature send = collective(5, 8);
  send.call = OpKind::Send;
  log.record(send);
  EXPECT_FALSE(log.made(5));
  EXPECT_FALSE(log.find(5));
}

TEST(CallDisagreement, EncodesEveryFieldLittleEndian) {
  CallSignature call;
  call.sequence = 0x0102030405060708ull;
  call.count = 1ull << 40;
  call.root = -1;
  call.call = OpKind::ReduceScatter;
  call.dtype = ncclBfloat16;
  call.redOp = ncclMin;
  call.reduceFlags = CallSignature::kAverage;
  uint8_t wire[kEncodedCallBytes];
  encodeCall(call, wire);
  EXPECT_EQ(wire[0], 0x08);
  EXPECT_EQ(wire[7], 0x01);
  const CallSignature back = decodeCall(wire);
  EXPECT_EQ(back.sequence, call.sequence);
  EXPECT_EQ(back.count, call.count);
  EXPECT_EQ(back.root, -1);
  EXPECT_EQ(back.call, OpKind::ReduceScatter);
  EXPECT_EQ(back.dtype, call.dtype);
  EXPECT_EQ(back.redOp, call.redOp);
  EXPECT_EQ(back.reduceFlags, call.reduceFlags);
}

// Both ranks that see a disagreement report the same words.
TEST(CallDisagreement, NamesTheLowerRankFirstWhoeverReports) {
  const CallSignature mine = collective(17, 1048576);
  CallSignature theirs = collective(17, 524288);
  theirs.dtype = ncclFloat64;
  const Error fromZero = callDisagreement(0, mine, 1, theirs);
  const Error fromOne = callDisagreement(1, theirs, 0, mine);
  EXPECT_EQ(fromZero.code(), ncclInvalidUsage);
  EXPECT_EQ(std::string(fromZero.what()), std::string(fromOne.what()));
  EXPECT_EQ(std::string(fromZero.what()),
            "op #17: rank 0 called allReduce(1048576 x float32, sum) but rank "
            "1 called allReduce(524288 x float64, sum)");
}

}  // namespace
}  // namespace hetccl
