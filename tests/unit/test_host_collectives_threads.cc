// The host domain's collectives with helper threads (HETCCL_HOST_THREADS)
// and with a reduce-scatter's input blocks apart (Op::blockStride):
// large copies and reductions are shared between threads and the staging
// rounds grow with them. Ranks given different numbers of threads must
// still agree on the rounds (the domain takes the smallest staging that
// its ranks want), and every result must be exact and the same on every
// rank, for counts that end inside a round and for parts around the
// threads' smallest share.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "domain/host/host_comm.h"
#include "op/op_traits.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr int kRanks = 3;

// Integer values, so that sums in any order are exact.
float valueOf(int rank, size_t i) {
  return static_cast<float>((i * 7 + static_cast<size_t>(rank) * 13) % 1000);
}

struct Case {
  OpKind kind;
  size_t count;  // NCCL's per-rank count
};

// What rank `rank`'s output of `c` must hold at element i.
float expected(const Case& c, int rank, size_t i) {
  switch (c.kind) {
    case OpKind::AllReduce: {
      float sum = 0;
      for (int r = 0; r < kRanks; ++r) sum += valueOf(r, i);
      return sum;
    }
    case OpKind::ReduceScatter: {
      float sum = 0;
      for (int r = 0; r < kRanks; ++r) sum += valueOf(r, rank * c.count + i);
      return sum;
    }
    case OpKind::AllGather:
      return valueOf(static_cast<int>(i / c.count), i % c.count);
    case OpKind::Broadcast:
      return valueOf(1, i);  // root 1
    default:
      return 0;
  }
}

size_t inputCount(const Case& c) {
  return c.kind == OpKind::ReduceScatter ? kRanks * c.count : c.count;
}
size_t outputCount(const Case& c) {
  return c.kind == OpKind::AllGather ? kRanks * c.count : c.count;
}

// Runs every case on kRanks ranks, rank r with threads[r] threads.
void runCases(const std::vector<int>& threads, size_t stagingBytes) {
  const std::vector<Case> cases = {
      {OpKind::AllReduce, 1},          {OpKind::AllReduce, 65537},
      {OpKind::AllReduce, 700001},     {OpKind::ReduceScatter, 3},
      {OpKind::ReduceScatter, 262147}, {OpKind::AllGather, 5},
      {OpKind::AllGather, 300007},     {OpKind::Broadcast, 900001},
  };
  InProcessWorld world(kRanks);
  std::vector<std::vector<std::vector<float>>> outputs(kRanks);
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    ShmSettings settings = ShmSettings::fromEnvironment();
    settings.chunkBytes = stagingBytes;
    settings.hostThreads = threads[rank];
    auto comm = HostComm::create(oob, settings, /*timeoutSeconds=*/60,
                                 std::make_shared<AbortSignal>(), nullptr);
    for (const Case& c : cases) {
      std::vector<float> send(inputCount(c));
      for (size_t i = 0; i < send.size(); ++i) send[i] = valueOf(rank, i);
      std::vector<float> recv(outputCount(c), -1.0f);
      Op op;
      op.kind = c.kind;
      op.sendbuff = send.data();
      op.recvbuff = recv.data();
      op.count = c.count;
      op.dtype = ncclFloat32;
      op.root = 1;
      comm->launch({op}, nullptr);  // NULL stream: done on return
      outputs[rank].push_back(std::move(recv));
    }
    EXPECT_TRUE(comm->drain(10));
  });
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    for (int rank = 0; rank < kRanks; ++rank) {
      const std::vector<float>& got = outputs[rank][k];
      size_t wrong = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != expected(c, rank, i)) ++wrong;
      EXPECT_EQ(wrong, 0u) << "case " << k << " (" << opKindName(c.kind)
                           << " of " << c.count << "), rank " << rank;
    }
    if (c.kind == OpKind::ReduceScatter) continue;
    for (int rank = 1; rank < kRanks; ++rank)
      EXPECT_EQ(std::memcmp(outputs[rank][k].data(), outputs[0][k].data(),
                            outputs[0][k].size() * sizeof(float)),
                0)
          << "case " << k << ": rank " << rank << " differs from rank 0";
  }
}

// A reduce-scatter whose input blocks lie apart (Op::blockStride, as the
// cross-domain reduce-scatter hands its domain step the blocks where they
// lie): each rank reduces the block at rank * stride; what lies between
// the blocks is never read.
TEST(HostCollectivesThreads, AReduceScatterReadsBlocksApart) {
  for (int threads : {1, 4}) {
    constexpr size_t kCount = 262147;
    constexpr size_t kStride = 2 * kCount + 5;
    InProcessWorld world(kRanks);
    std::vector<std::vector<float>> outputs(kRanks);
    runRanks(kRanks, [&](int rank) {
      InProcessOob oob(world, rank);
      ShmSettings settings = ShmSettings::fromEnvironment();
      settings.hostThreads = threads;
      auto comm = HostComm::create(oob, settings, /*timeoutSeconds=*/60,
                                   std::make_shared<AbortSignal>(), nullptr);
      std::vector<float> send((kRanks - 1) * kStride + kCount);
      for (size_t i = 0; i < send.size(); ++i)
        send[i] = i % kStride < kCount ? valueOf(rank, i) : 1e30f;
      outputs[rank].assign(kCount, -1.0f);
      Op op;
      op.kind = OpKind::ReduceScatter;
      op.sendbuff = send.data();
      op.recvbuff = outputs[rank].data();
      op.count = kCount;
      op.blockStride = kStride;
      op.dtype = ncclFloat32;
      comm->launch({op}, nullptr);
      EXPECT_TRUE(comm->drain(10));
    });
    for (int rank = 0; rank < kRanks; ++rank) {
      size_t wrong = 0;
      for (size_t i = 0; i < kCount; ++i) {
        float sum = 0;
        for (int r = 0; r < kRanks; ++r) sum += valueOf(r, rank * kStride + i);
        if (outputs[rank][i] != sum) ++wrong;
      }
      EXPECT_EQ(wrong, 0u) << threads << " threads, rank " << rank;
    }
  }
}

// Blocks apart are for a reduce-scatter's input only, and may not overlap.
TEST(HostCollectivesThreads, BlocksApartElsewhereAreAnInternalError) {
  InProcessWorld world(1);
  InProcessOob oob(world, 0);
  auto comm = HostComm::create(oob, ShmSettings::fromEnvironment(), 60,
                               std::make_shared<AbortSignal>(), nullptr);
  std::vector<float> data(64);
  Op op;
  op.kind = OpKind::AllReduce;
  op.sendbuff = data.data();
  op.recvbuff = data.data();
  op.count = 8;
  op.blockStride = 16;
  try {
    comm->launch({op}, nullptr);
    FAIL() << "an all-reduce with blocks apart ran";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ncclInternalError);
    EXPECT_NE(std::string(error.what()).find("only a reduce-scatter"),
              std::string::npos)
        << error.what();
  }
}

TEST(HostCollectivesThreads, EveryRankWithFourThreads) {
  runCases({4, 4, 4}, 512 << 10);
}

TEST(HostCollectivesThreads, RanksWithDifferentThreadsAgreeOnTheRounds) {
  runCases({1, 3, 4}, 512 << 10);
  runCases({4, 2, 3}, 256 << 10);
}

TEST(HostCollectivesThreads, OneThreadAsBefore) {
  runCases({1, 1, 1}, 64 << 10);
}

}  // namespace
}  // namespace hetccl
