// A host domain's waits for a peer do the work given to setWhileWaiting
// between their looks. The host engine moves its rank's transfers to other
// domains there: a shm link without a progress thread moves only while its
// rank posts or waits, and 4 CPU ranks in 2 domains stopped on 2 cores
// with a rank in a domain step and its send to the other domain half in
// the ring (the receiver's domain peer waiting in turn for that receiver).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "domain/host/host_comm.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"

namespace hetccl {
namespace {

constexpr int kRanks = 2;
constexpr size_t kCount = 1000;
constexpr auto kLate = std::chrono::milliseconds(100);

struct LateRun {
  std::vector<int> work;  // how often each rank's waits did it
  std::vector<std::vector<float>> outputs;
};

// Runs the op of `kind` on 2 ranks, rank r sending kCount values of r + 1
// (to rank `1 - r` for a send), rank 1 joining kLate after rank 0.
LateRun runWithRankOneLate(OpKind kind) {
  InProcessWorld world(kRanks);
  std::atomic<int> work[kRanks] = {};
  LateRun run;
  run.outputs.assign(kRanks, std::vector<float>(kCount, 0.0f));
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    auto comm = HostComm::create(oob, ShmSettings::fromEnvironment(),
                                 /*timeoutSeconds=*/60,
                                 std::make_shared<AbortSignal>(), nullptr);
    comm->setWhileWaiting([&work, rank] { work[rank].fetch_add(1); });
    std::vector<float> send(kCount, rank + 1.0f);
    Op op;
    op.kind = kind == OpKind::Send && rank == 0 ? OpKind::Recv : kind;
    op.sendbuff = send.data();
    op.recvbuff = run.outputs[rank].data();
    op.count = kCount;
    op.dtype = ncclFloat32;
    op.root = 1 - rank;  // the peer of a send or receive
    if (rank == 1) std::this_thread::sleep_for(kLate);
    comm->launch({op}, nullptr);
    EXPECT_TRUE(comm->drain(10));
  });
  run.work = {work[0].load(), work[1].load()};
  return run;
}

TEST(HostCommWaits, AWaitForACollectivesPeerDoesTheWork) {
  const LateRun run = runWithRankOneLate(OpKind::AllReduce);
  EXPECT_GT(run.work[0], 0) << "rank 0 waited for rank 1 without the work";
  for (int rank = 0; rank < kRanks; ++rank)
    EXPECT_EQ(run.outputs[rank], std::vector<float>(kCount, 3.0f)) << rank;
}

// Rank 1 sends, rank 0 receives.
TEST(HostCommWaits, AWaitForAMatchingSendDoesTheWork) {
  const LateRun run = runWithRankOneLate(OpKind::Send);
  EXPECT_GT(run.work[0], 0) << "rank 0 waited for rank 1 without the work";
  EXPECT_EQ(run.outputs[0], std::vector<float>(kCount, 2.0f));
}

}  // namespace
}  // namespace hetccl
