// Sends and receives among GPU ranks of one host driven by their streams,
// run on the emulated device module (ranks are threads, their "GPU"
// streams host streams): every byte arrives, whatever order the ranks
// post their transfers in, across launches and between collectives; a
// transfer longer than a channel's slots makes senders wait for receivers.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/gpu/hostshm/device_shm_collectives.h"
#include "runtime/host/emulated_device_module.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"
#include "util/error.h"

namespace hetccl {
namespace {

// Channel slots of 4 KiB: a transfer of more than 16 KiB fills a channel.
constexpr size_t kChunkBytes = 4096;

struct Transfer {
  int from;
  int to;
  size_t bytes;
};

// The bytes of the index-th transfer of a group, as sent.
std::vector<char> payload(const Transfer& t, size_t index) {
  std::vector<char> data(t.bytes);
  std::mt19937 random(static_cast<unsigned>(1000 * t.from + 10 * t.to + index));
  for (char& byte : data) byte = static_cast<char>(random());
  return data;
}

// One rank's side of a group: its sends and receives, posted peer by peer
// in an order of the rank's own (its later peers first, receives before
// sends on even ranks and after them on odd ones); transfers between the
// same two ranks keep their order, which is how NCCL matches them.
struct RankGroup {
  std::vector<std::vector<char>> sent, received;
  std::vector<std::vector<char>> expected;  // by receive
  std::vector<Op> ops;

  RankGroup(int rank, int nranks, const std::vector<Transfer>& group) {
    for (int step = 0; step < nranks; ++step) {
      const int peer = (rank + nranks - 1 - step) % nranks;
      for (bool sends : {rank % 2 == 1, rank % 2 == 0})
        for (size_t i = 0; i < group.size(); ++i) {
          const Transfer& t = group[i];
          if ((sends ? t.from : t.to) != rank ||
              (sends ? t.to : t.from) != peer)
            continue;
          Op op;
          op.dtype = ncclUint8;
          op.count = t.bytes;
          op.root = peer;
          if (sends) {
            sent.push_back(payload(t, i));
            op.kind = OpKind::Send;
            op.sendbuff = sent.back().data();
          } else {
            received.emplace_back(t.bytes, '\x5a');
            expected.push_back(payload(t, i));
            op.kind = OpKind::Recv;
            op.recvbuff = received.back().data();
          }
          ops.push_back(op);
        }
    }
  }
};

// Runs `groups` one launch after another on one stream per rank, each
// followed by an all-reduce, and checks every byte received.
void runGroups(int nranks, const std::vector<std::vector<Transfer>>& groups) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(nranks);
  runRanks(nranks, [&](int rank) {
    InProcessOob oob(world, rank);
    // The default: the all-reduces between the groups take the kernel.
    DeviceShmCollectives paths(oob, module, kChunkBytes, 64 << 10);
    void* stream = nullptr;
    ASSERT_EQ(module.api().streamCreate(&stream), 0);
    std::vector<RankGroup> sides;
    sides.reserve(groups.size());  // the ops point into the vectors
    std::vector<float> sums(groups.size() * 3, 1.0f);
    for (size_t g = 0; g < groups.size(); ++g) {
      sides.emplace_back(rank, nranks, groups[g]);
      paths.launchPointToPoint(sides.back().ops, stream, {});
      Op allReduce;
      allReduce.sendbuff = allReduce.recvbuff = &sums[3 * g];
      allReduce.count = 3;
      paths.launch(allReduce, stream, /*capturing=*/false, /*agreed=*/true);
    }
    ASSERT_EQ(module.api().streamSynchronize(stream), 0);
    for (size_t g = 0; g < groups.size(); ++g) {
      EXPECT_EQ(sides[g].received, sides[g].expected)
          << "rank " << rank << ", group " << g;
      EXPECT_EQ(sums[3 * g + 2], static_cast<float>(nranks));
    }
    module.api().streamDestroy(stream);
  });
}

TEST(DeviceShmPointToPoint, RingAcrossLaunches) {
  for (int nranks : {2, 3}) {
    std::vector<std::vector<Transfer>> groups;
    for (size_t bytes : {0, 1, 4097, 40000, 3}) {
      std::vector<Transfer> ring;
      for (int r = 0; r < nranks; ++r)
        ring.push_back({r, (r + 1) % nranks, bytes});
      groups.push_back(ring);
    }
    runGroups(nranks, groups);
  }
}

// Every rank sends to every rank (itself too) amounts of its own, twice to
// its next rank: all-to-all-v, as pipeline and expert parallelism build
// from grouped sends and receives. Most transfers fill their channel.
TEST(DeviceShmPointToPoint, EveryPairInAnyPostingOrder) {
  for (int nranks : {2, 4}) {
    std::vector<Transfer> group;
    for (int from = 0; from < nranks; ++from)
      for (int to = 0; to < nranks; ++to) {
        group.push_back(
            {from, to, 7000 * static_cast<size_t>(from + 1) + 3 * to});
        if (to == (from + 1) % nranks) group.push_back({from, to, 20001});
      }
    runGroups(nranks, {group, group});
  }
}

TEST(DeviceShmPointToPoint, SelfTransfersThatDoNotPairUpAreRefused) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(1);
  InProcessOob oob(world, 0);
  DeviceShmCollectives paths(oob, module, kChunkBytes, 0);
  char buffer[8] = {};
  Op send;
  send.kind = OpKind::Send;
  send.sendbuff = buffer;
  send.count = 8;
  send.dtype = ncclUint8;
  Op recv = send;
  recv.kind = OpKind::Recv;
  recv.recvbuff = buffer;
  recv.count = 4;
  for (const std::vector<Op>& ops :
       {std::vector<Op>{send}, std::vector<Op>{send, recv}}) {
    try {
      paths.launchPointToPoint(ops, nullptr, {});
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ncclInvalidUsage) << e.what();
    }
  }
}

}  // namespace
}  // namespace hetccl
