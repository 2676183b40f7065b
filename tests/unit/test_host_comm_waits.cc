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

// Runs `op` (built per rank from its buffers) on 2 ranks, rank 1 joining
// kLate after rank 0; returns how often each rank's waits did their work.
template <typename MakeOp>
std::vector<int> workWhileRankOneIsLate(
    std::vector<std::vector<float>>& sends,
    std::vector<std::vector<float>>& outputs, MakeOp makeOp) {
  InProcessWorld world(kRanks);
  std::atomic<int> work[kRanks] = {};
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    auto comm = HostComm::create(oob, ShmSettings::fromEnvironment(),
                                 /*timeoutSeconds=*/60,
                                 std::make_shared<AbortSignal>(), nullptr);
    comm->setWhileWaiting([&work, rank] { work[rank].fetch_add(1); });
    if (rank == 1) std::this_thread::sleep_for(kLate);
    comm->launch({makeOp(rank, sends[rank], outputs[rank])}, nullptr);
    EXPECT_TRUE(comm->drain(10));
  });
  return {work[0].load(), work[1].load()};
}

TEST(HostCommWaits, AWaitForACollectivesPeerDoesTheWork) {
  std::vector<std::vector<float>> sends, outputs(kRanks);
  for (int rank = 0; rank < kRanks; ++rank) {
    sends.emplace_back(kCount, rank + 1.0f);
    outputs[rank].assign(kCount, 0.0f);
  }
  const std::vector<int> work = workWhileRankOneIsLate(
      sends, outputs,
      [](int, std::vector<float>& send, std::vector<float>& out) {
        Op op;
        op.kind = OpKind::AllReduce;
        op.sendbuff = send.data();
        op.recvbuff = out.data();
        op.count = kCount;
        op.dtype = ncclFloat32;
        return op;
      });
  EXPECT_GT(work[0], 0) << "rank 0 waited for rank 1 without doing the work";
  for (int rank = 0; rank < kRanks; ++rank)
    EXPECT_EQ(outputs[rank], std::vector<float>(kCount, 3.0f)) << rank;
}

TEST(HostCommWaits, AWaitForAMatchingSendDoesTheWork) {
  std::vector<std::vector<float>> sends, outputs(kRanks);
  for (int rank = 0; rank < kRanks; ++rank) {
    sends.emplace_back(kCount, rank + 1.0f);
    outputs[rank].assign(kCount, 0.0f);
  }
  const std::vector<int> work = workWhileRankOneIsLate(
      sends, outputs,
      [](int rank, std::vector<float>& send, std::vector<float>& out) {
        Op op;
        op.kind = rank == 0 ? OpKind::Recv : OpKind::Send;
        op.sendbuff = send.data();
        op.recvbuff = out.data();
        op.count = kCount;
        op.dtype = ncclFloat32;
        op.root = 1 - rank;
        return op;
      });
  EXPECT_GT(work[0], 0) << "rank 0 waited for rank 1 without doing the work";
  EXPECT_EQ(outputs[0], std::vector<float>(kCount, 2.0f));
}

}  // namespace
}  // namespace hetccl
