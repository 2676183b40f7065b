// TransferAgreement on two ranks' outboxes (ranks as threads): the end of
// a transfer that posts second compares and raises both ends' agreement
// words, the first is told to wait for its word; a send and a receive of
// another count or type fail on the second poster with ncclInvalidUsage
// naming both calls, and raise nothing; a lane's ring of signatures is
// used again once its transfers agreed; and only sends and receives with
// another rank, numbered, are posted.
#include "engine/gpu/hostshm/transfer_agreement.h"

#include <gtest/gtest.h>

#include "runtime/host/emulated_device_module.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr auto kSending = DeviceOutboxes::kSending;
constexpr auto kReceiving = DeviceOutboxes::kReceiving;

Op transfer(OpKind kind, int peer, uint64_t number, size_t count,
            ncclDataType_t dtype = ncclFloat32) {
  Op op;
  op.kind = kind;
  op.root = peer;
  op.sequence = number;
  op.count = count;
  op.dtype = dtype;
  return op;
}

uint64_t load(const uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

// body(rank, outboxes, agreement, barrier) on two ranks.
template <typename Body>
void withTwoRanks(Body body) {
  InProcessWorld world(2);
  runRanks(2, [&](int rank) {
    InProcessOob oob(world, rank);
    DeviceOutboxes outboxes(oob, emulatedDeviceModule(), 4096, 4096, 0);
    AbortSignal abort;
    TransferAgreement agreement(outboxes, abort, 30);
    body(rank, outboxes, agreement, [&] { oob.barrier(); });
    oob.barrier();
  });
}

TEST(TransferAgreement, TheSecondEndAgreesForBoth) {
  withTwoRanks([&](int rank, DeviceOutboxes& boxes,
                   TransferAgreement& agreement, auto barrier) {
    if (rank == 0) {
      const LaneWaits waits =
          agreement.post({transfer(OpKind::Send, 1, 1, 10),
                          transfer(OpKind::Send, 1, 2, 20, ncclInt8)});
      EXPECT_EQ(waits.upTo(1, kSending), 2u);
      EXPECT_EQ(waits.upTo(1, kReceiving), 0u);
    }
    barrier();
    if (rank == 1) {
      const LaneWaits waits =
          agreement.post({transfer(OpKind::Recv, 0, 1, 10),
                          transfer(OpKind::Recv, 0, 2, 20, ncclInt8)});
      EXPECT_EQ(waits.upTo(0, kReceiving), 0u);
      EXPECT_EQ(load(boxes.transferAgreedWord(0, 1, kSending)), 2u);
      EXPECT_EQ(load(boxes.transferAgreedWord(1, 0, kReceiving)), 2u);
      EXPECT_EQ(load(boxes.transferAgreedWord(1, 0, kSending)), 0u);
    }
  });
}

TEST(TransferAgreement, TransfersThatDisagreeFailTheSecondEnd) {
  struct Case {
    Op receive;
    const char* message;
  };
  const Case cases[] = {
      {transfer(OpKind::Recv, 0, 1, 500),
       "op #1: rank 0 called send(1000 x float32, to rank 1) but rank 1 "
       "called recv(500 x float32, from rank 0)"},
      {transfer(OpKind::Recv, 0, 1, 1000, ncclInt32),
       "op #1: rank 0 called send(1000 x float32, to rank 1) but rank 1 "
       "called recv(1000 x int32, from rank 0)"},
  };
  for (const Case& c : cases)
    withTwoRanks([&](int rank, DeviceOutboxes& boxes,
                     TransferAgreement& agreement, auto barrier) {
      if (rank == 0) agreement.post({transfer(OpKind::Send, 1, 1, 1000)});
      barrier();
      if (rank == 1) {
        try {
          agreement.post({c.receive});
          ADD_FAILURE() << "no disagreement: " << c.message;
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ncclInvalidUsage);
          EXPECT_STREQ(e.what(), c.message);
        }
        EXPECT_EQ(load(boxes.transferAgreedWord(0, 1, kSending)), 0u);
        EXPECT_EQ(load(boxes.transferAgreedWord(1, 0, kReceiving)), 0u);
      }
    });
}

// Both ranks post three rings' worth each way, as fast as they can.
TEST(TransferAgreement, ARingIsUsedAgainOnceAgreed) {
  constexpr uint64_t kTransfers = 3 * DeviceOutboxes::kTransferRing;
  withTwoRanks([&](int rank, DeviceOutboxes& boxes,
                   TransferAgreement& agreement, auto barrier) {
    const int peer = 1 - rank;
    for (uint64_t n = 1; n <= kTransfers; ++n)
      agreement.post({transfer(OpKind::Send, peer, n, n % 7),
                      transfer(OpKind::Recv, peer, n, n % 7)});
    barrier();
    for (auto direction : {kSending, kReceiving})
      EXPECT_EQ(load(boxes.transferAgreedWord(rank, peer, direction)),
                kTransfers);
  });
}

TEST(TransferAgreement, OnlyNumberedTransfersWithAnotherRankArePosted) {
  withTwoRanks(
      [&](int rank, DeviceOutboxes& boxes, TransferAgreement& agreement, auto) {
        if (rank != 0) return;
        Op allReduce = transfer(OpKind::AllReduce, -1, 1, 10);
        const LaneWaits waits = agreement.post(
            {transfer(OpKind::Send, 1, 0, 10), transfer(OpKind::Send, 0, 1, 10),
             transfer(OpKind::Recv, 0, 1, 10), allReduce});
        for (int peer : {0, 1})
          for (auto direction : {kSending, kReceiving})
            EXPECT_EQ(waits.upTo(peer, direction), 0u);
        EXPECT_EQ(boxes.postedTransfer(0, 1, kSending, 1).number, 0u);
      });
}

}  // namespace
}  // namespace hetccl
