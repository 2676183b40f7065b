// The ucx transport on UCX's own transports of this machine (tcp, shared
// memory): transfers of every size both ways, posting order kept whatever
// UCX delivers first, counters, and that every failure (abort, a peer that
// goes, mismatched sizes, a silent peer) ends waits promptly with the
// right error. Ranks are threads of this process, each with its own UCX
// worker. Skipped where the build has no UCX module.
#include "transport/ucx/ucx_link_set.h"

#include <sched.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/built_ucx_module.h"
#include "support/elapsed.h"
#include "support/expect_error.h"
#include "support/in_process_oob.h"
#include "support/link_ranks.h"
#include "support/scoped_env.h"
#include "transport/ucx/ucx_library.h"
#include "transport/ucx/ucx_link.h"
#include "transport/ucx/ucx_tag.h"
#include "util/error.h"

namespace hetccl {
namespace {

using Ranks = LinkRanks<UcxLinkSet>;
// The smallest part of the tests' links whatever the cores here.
constexpr size_t kUcxSplitBytes = kUcxFewCoresSplitBytes;

class UcxLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* why = nullptr;
    if (!useBuiltUcxModule(&why)) GTEST_SKIP() << why;
  }

  // Three lanes by default: transfers of 768 KiB and more are cut into
  // uneven parts. `splitOf`: each rank's smallest part (kUcxSplitBytes
  // without it).
  static Ranks makeRanks(int nranks,
                         std::function<std::vector<int>(int)> peersOf = nullptr,
                         int lanes = 3, size_t partBytes = kUcxPartBytes,
                         GpuBuffers gpu = GpuBuffers::kAuto,
                         std::function<size_t(int)> splitOf = nullptr) {
    return makeLinkRanks<UcxLinkSet>(
        nranks,
        [lanes, partBytes, gpu, splitOf](Oob& oob,
                                         const std::vector<int>& peers,
                                         std::shared_ptr<AbortSignal> abort,
                                         std::shared_ptr<const CallLog> calls) {
          const size_t split = splitOf ? splitOf(oob.rank()) : kUcxSplitBytes;
          return std::make_unique<UcxLinkSet>(
              oob, peers, abort, UcxSettings{lanes, partBytes, gpu, split},
              calls);
        },
        std::move(peersOf));
  }
};

TEST_F(UcxLinkTest, TwoRanksEverySizeBothDirections) {
  Ranks ranks = makeRanks(2);
  exchangeAll(ranks.sets(), {0, 1, 4097, (1u << 20) + 3, 64u << 20, 0, 7});
}

TEST_F(UcxLinkTest, OneLaneEverySize) {
  Ranks ranks = makeRanks(2, nullptr, 1);
  exchangeAll(ranks.sets(), {0, 1, 4097, (1u << 20) + 3, 16u << 20, 7});
}

// Parts of 64 KiB: a 1 MiB + 3 transfer goes in 17 uneven parts over 2
// lanes; 9 MiB in 144.
TEST_F(UcxLinkTest, SmallPartsEverySize) {
  Ranks ranks = makeRanks(2, nullptr, 2, kMinUcxPartBytes);
  exchangeAll(ranks.sets(), {0, 1, 4097, (1u << 20) + 3, 9u << 20, 7});
}

TEST_F(UcxLinkTest, PartSizesOutOfBoundsAreRefused) {
  for (size_t partBytes : {kMinUcxPartBytes - 1, kMaxUcxPartBytes + 1}) {
    InProcessWorld world(1);
    InProcessOob oob(world, 0);
    Error e = expectError([&] {
      UcxLinkSet(oob, {}, std::make_shared<AbortSignal>(),
                 UcxSettings{1, partBytes});
    });
    EXPECT_EQ(e.code(), ncclInvalidArgument);
  }
}

// Lanes 0 means one per 4 cores: a process held to one core gets one lane.
TEST_F(UcxLinkTest, LanesFollowTheCoresWhenNotSet) {
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  Ranks ranks = makeRanks(2, nullptr, 0);  // rank threads inherit one core
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
  for (auto* set : ranks.sets())
    EXPECT_EQ(static_cast<UcxLinkSet*>(set)->lanes(), 1u);
  exchangeAll(ranks.sets(), {0, 4097, (1u << 20) + 3});
}

TEST_F(UcxLinkTest, ThreeRanksFullyConnectedManyTransfersInFlight) {
  Ranks ranks = makeRanks(3);
  std::vector<size_t> sizes;
  // Whole transfers on the lanes in turn, and (every fifth) cut ones.
  for (int i = 0; i < 60; ++i)
    sizes.push_back(i % 7 == 0   ? 0
                    : i % 5 == 0 ? (3u << 20) + static_cast<size_t>(i)
                                 : (static_cast<size_t>(i) * 40009) % 300000);
  exchangeAll(ranks.sets(), sizes);
}

// Eager messages that arrive long before their receives are posted wait in
// UCX's unexpected queue and still land in posting order.
TEST_F(UcxLinkTest, SendsPostedLongBeforeTheReceives) {
  constexpr int kTransfers = 50;
  constexpr size_t kBytes = 3000;
  Ranks ranks = makeRanks(2);
  std::vector<std::vector<uint8_t>> out,
      in(kTransfers, std::vector<uint8_t>(kBytes));
  std::vector<std::shared_ptr<TransferRequest>> sends;
  for (int i = 0; i < kTransfers; ++i) {
    out.push_back(makePayload(0, 1, i, kBytes));
    sends.push_back(
        ranks.transports[0]->link(1)->send(out[i].data(), kBytes, kTestCall));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < kTransfers; ++i) {
    ranks.transports[1]
        ->link(0)
        ->recv(in[i].data(), kBytes, kTestCall)
        ->wait(AbortSignal(), kLinkWaitSeconds);
    EXPECT_EQ(firstMismatch(in[i], 0, 1, i), -1) << "transfer " << i;
  }
  for (auto& send : sends) send->wait(AbortSignal(), kLinkWaitSeconds);
}

// One message each way, waited for, many times: the progress thread must
// wake for every post and every arrival.
TEST_F(UcxLinkTest, BackToBackSmallTransfersStayQuick) {
  constexpr int kRoundTrips = 1000;
  Ranks ranks = makeRanks(2);
  auto start = Clock::now();
  runRanks(2, [&](int r) {
    auto link = ranks.transports[r]->link(1 - r);
    uint64_t word = 0;
    for (int i = 0; i < kRoundTrips; ++i) {
      if (r == 0) {
        word = i;
        link->send(&word, sizeof word, kTestCall)
            ->wait(AbortSignal(), kLinkWaitSeconds);
        link->recv(&word, sizeof word, kTestCall)
            ->wait(AbortSignal(), kLinkWaitSeconds);
        EXPECT_EQ(word, static_cast<uint64_t>(i) + 1);
      } else {
        link->recv(&word, sizeof word, kTestCall)
            ->wait(AbortSignal(), kLinkWaitSeconds);
        ++word;
        link->send(&word, sizeof word, kTestCall)
            ->wait(AbortSignal(), kLinkWaitSeconds);
      }
    }
  });
  EXPECT_LT(secondsSince(start), 5.0) << kRoundTrips << " round trips";
}

TEST_F(UcxLinkTest, TagsNameLinkSetSenderTransferAndPart) {
  UcxTag tag;
  EXPECT_EQ(tag.value(), 0u);
  tag = {0xab, 5, 7, 2, 3};
  EXPECT_EQ(tag.value(), (uint64_t{0xab} << 56) | (uint64_t{5} << 36) |
                             (uint64_t{7} << 16) | (2 << 8) | 2);
  const UcxTag back = UcxTag::of(tag.value());
  EXPECT_EQ(back.linkSet, 0xab);
  EXPECT_EQ(back.sender, 5);
  EXPECT_EQ(back.transfer, 7u);
  EXPECT_EQ(back.part, 2u);
  EXPECT_EQ(back.parts, 3u);
  // Transfer numbers wrap within their 20 bits; the rest never mix.
  UcxTag wrapped = {1, kMaxUcxRank, uint64_t{1} << 20, 0, kMaxUcxParts};
  UcxTag first = {1, kMaxUcxRank, 0, 0, kMaxUcxParts};
  EXPECT_EQ(wrapped.value(), first.value());
  EXPECT_EQ(UcxTag::of(first.value()).parts, kMaxUcxParts);
  EXPECT_NE((UcxTag{1, 2, 3, 0, 1}.value()), (UcxTag{2, 2, 3, 0, 1}.value()));
  EXPECT_NE((UcxTag{1, 2, 3, 0, 1}.value()), (UcxTag{1, 3, 3, 0, 1}.value()));
  EXPECT_NE((UcxTag{1, 2, 3, 0, 2}.value()), (UcxTag{1, 2, 3, 1, 2}.value()));
  // Receives match on all but the parts count.
  const UcxTag twoParts{1, 2, 3, 0, 2}, fiveParts{1, 2, 3, 0, 5};
  EXPECT_EQ(twoParts.value() & kUcxMatchMask,
            fiveParts.value() & kUcxMatchMask);
}

TEST_F(UcxLinkTest, RdmaTransportsAreToldApart) {
  EXPECT_TRUE(listsRdmaTransport("tcp/eth0, rc_mlx5/mlx5_0:1"));
  EXPECT_TRUE(listsRdmaTransport("ud_verbs/mlx5_0:1"));
  EXPECT_TRUE(listsRdmaTransport("dc_mlx5/mlx5_1:1"));
  EXPECT_TRUE(listsRdmaTransport("rc/mlx5_0:1"));
  EXPECT_FALSE(listsRdmaTransport("self/memory0, tcp/lo, posix/memory"));
  EXPECT_FALSE(listsRdmaTransport("rdmacm/sockaddr, cuda_copy/cuda"));
  EXPECT_FALSE(listsRdmaTransport(""));
  // This machine: UCX without an RDMA device.
  EXPECT_FALSE(ucxLibrary().hasRdma()) << ucxLibrary().transports();
  EXPECT_NE(ucxLibrary().transports().find("tcp/"), std::string::npos);
}

TEST_F(UcxLinkTest, CallerAbortEndsAWaitPromptly) {
  Ranks ranks = makeRanks(2);
  expectCallerAbortEndsAWait(*ranks.transports[1]->link(0));
}

TEST_F(UcxLinkTest, TransportAbortStopsProgressAndFailsWaits) {
  Ranks ranks = makeRanks(2);
  expectTransportAbortFailsWaits(*ranks.transports[1]->link(0),
                                 *ranks.aborts[1]);
}

TEST_F(UcxLinkTest, PeerThatGoesAwayFailsPendingAndLaterTransfers) {
  std::vector<uint8_t> buffer(1 << 20);
  Ranks ranks = makeRanks(2);
  auto link = ranks.transports[1]->link(0);
  // Once connected (the first message), the peer's going is noticed.
  uint64_t word = 1;
  ranks.transports[0]->link(1)->send(&word, sizeof word, kTestCall);
  link->recv(&word, sizeof word, kTestCall)
      ->wait(AbortSignal(), kLinkWaitSeconds);
  auto request = link->recv(buffer.data(), buffer.size(), kTestCall);
  auto start = Clock::now();
  ranks.transports[0].reset();
  Error e =
      expectError([&] { request->wait(AbortSignal(), kLinkWaitSeconds); });
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
  EXPECT_NE(std::string(e.what()).find("connection to rank 0 lost"),
            std::string::npos)
      << e.what();
  auto later = link->recv(buffer.data(), 10, kTestCall);
  EXPECT_EQ(
      expectError([&] { later->wait(AbortSignal(), kLinkWaitSeconds); }).code(),
      ncclRemoteError);
}

TEST_F(UcxLinkTest, DestroyingTheTransportFailsItsPendingTransfers) {
  std::vector<uint8_t> buffer(4096);
  Ranks ranks = makeRanks(2);
  auto link = ranks.transports[1]->link(0);
  auto request = link->recv(buffer.data(), buffer.size(), kTestCall);
  ranks.transports[1].reset();
  EXPECT_NE(expectError([&] { request->wait(AbortSignal(), 1); }).code(),
            ncclSuccess);
  // The link outlives its transport without crashing.
  auto later = link->send(buffer.data(), 16, kTestCall);
  EXPECT_THROW(later->done(), Error);
}

TwoRanks twoOf(Ranks& ranks) {
  return {{ranks.transports[0].get(), ranks.transports[1].get()},
          {ranks.aborts[0].get(), ranks.aborts[1].get()},
          {ranks.calls[0].get(), ranks.calls[1].get()}};
}

TEST_F(UcxLinkTest, CallsThatDisagreeFailBothEnds) {
  Ranks ranks = makeRanks(2);
  expectCallsThatDisagreeFailBothEnds(twoOf(ranks));
}

// Also where the receive is cut into other parts than the send.
TEST_F(UcxLinkTest, CallsThatDisagreeAreReportedBeforeSizes) {
  Ranks small = makeRanks(2);
  expectDisagreementBeforeSizes(twoOf(small));
  Ranks cut = makeRanks(2, nullptr, 2, kMinUcxPartBytes);
  expectDisagreementBeforeSizes(twoOf(cut), size_t{1} << 20);
}

TEST_F(UcxLinkTest, AnUnclaimedTransferOfACallThatDisagreesFailsBothEnds) {
  Ranks ranks = makeRanks(2);
  expectUnclaimedCallThatDisagreesFailsBothEnds(twoOf(ranks));
}

TEST_F(UcxLinkTest, SaysTheLatestCollectiveThatArrived) {
  Ranks ranks = makeRanks(2);
  expectLatestCallFromFollowsCollectives(twoOf(ranks));
}

TEST_F(UcxLinkTest, MismatchedSizesAreReported) {
  std::vector<uint8_t> out(5000, 1), in(3000), small(100, 2), big(200);
  Ranks ranks = makeRanks(2);
  // Longer than the receive: UCX truncates and reports it.
  ranks.transports[0]->link(1)->send(out.data(), out.size(), kTestCall);
  auto recv =
      ranks.transports[1]->link(0)->recv(in.data(), in.size(), kTestCall);
  EXPECT_NE(
      expectError([&] { recv->wait(AbortSignal(), kLinkWaitSeconds); }).code(),
      ncclSuccess);
  // Shorter than the receive: the sizes are named.
  ranks.transports[0]->link(1)->send(small.data(), small.size(), kTestCall);
  recv = ranks.transports[1]->link(0)->recv(big.data(), big.size(), kTestCall);
  Error e = expectError([&] { recv->wait(AbortSignal(), kLinkWaitSeconds); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("sent 100 bytes where rank 1 expected "
                                       "200"),
            std::string::npos)
      << e.what();
}

// Sizes that are cut into different numbers of parts (here 3 MiB and
// 2 MiB, in 1 MiB parts) must not pass for each other part by part.
TEST_F(UcxLinkTest, MismatchedSizesCutDifferentlyAreReported) {
  std::vector<uint8_t> out(3 << 20, 1), in(2 << 20);
  Ranks ranks = makeRanks(2, nullptr, 1);
  auto send =
      ranks.transports[0]->link(1)->send(out.data(), out.size(), kTestCall);
  auto recv =
      ranks.transports[1]->link(0)->recv(in.data(), in.size(), kTestCall);
  Error e = expectError([&] { recv->wait(AbortSignal(), kLinkWaitSeconds); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("rank 0 sent its transfer in 3 "
                                       "part(s) where rank 1 expects 2"),
            std::string::npos)
      << e.what();
}

// A send and a receive of one call whose sizes differ, on either side of
// every cut, after a transfer that moves the link's count off a multiple
// of the lanes: the first parts meet on the home lane whatever the sizes
// (dealt by number, a whole transfer and the first part of a cut one went
// to different lanes and never met), and the receive fails at once.
TEST_F(UcxLinkTest, TransfersOfDifferentSizesFailAtOnceAcrossEveryCut) {
  constexpr size_t kSplit = kUcxSplitBytes;
  const std::pair<size_t, size_t> pairs[] = {
      {100 * 1024, 3000},        {3000, 100 * 1024},
      {2 * kSplit, kSplit},      {kSplit, 2 * kSplit},
      {2 * kSplit, 3 * kSplit},  {3 * kSplit, 2 * kSplit},
      {16 * kSplit, 3 * kSplit}, {kUcxPartBytes * 5, kUcxPartBytes * 4}};
  for (auto [sent, posted] : pairs) {
    // Declared first: they must outlive the transfers still pending.
    std::vector<uint8_t> out(sent, 1), in(posted);
    Ranks ranks = makeRanks(2);
    EXPECT_NE(expectSizesThatDifferFailAtOnce(twoOf(ranks), out, in).code(),
              ncclSuccess)
        << sent << " against " << posted;
  }
}

// Sizes on either side of every cut arrive whole on 3 lanes: one part
// below two splits, then one per split up to a part per lane, then parts
// of at most the part size.
TEST_F(UcxLinkTest, SizesAroundEveryCutArriveWhole) {
  Ranks ranks = makeRanks(2);
  std::vector<size_t> sizes;
  for (size_t cut : {kUcxSplitBytes, 2 * kUcxSplitBytes, 3 * kUcxSplitBytes,
                     3 * kUcxPartBytes, 4 * kUcxPartBytes})
    for (size_t size : {cut - 1, cut, cut + 1}) sizes.push_back(size);
  exchangeAll(ranks.sets(), sizes);
}

// The pieces of a transfer (PiecedLink, as cross-domain plans send) go
// whole to the lanes in turn, in parts of at most the part size, and
// arrive whole at both ends: lone transfers, a piece and a short one, a
// piece per lane and more pieces than lanes, pieces larger than a part.
TEST_F(UcxLinkTest, PiecesOfATransferTakeTheLanesInTurnAndArriveWhole) {
  Ranks ranks = makeRanks(2);
  const std::vector<size_t> sizes = {100,           300 << 10, 1 << 20,
                                     (1 << 20) + 1, 5 << 20,   7};
  exchangeAllInPieces(ranks.sets(), sizes, 512 << 10);
  exchangeAllInPieces(ranks.sets(), sizes, kUcxPartBytes * 2);
}

// Transfers in pieces whose sizes differ fail at once: where the first
// pieces differ, and where the pieces agree up to one that does not.
TEST_F(UcxLinkTest, TransfersInPiecesOfDifferentSizesFailAtOnce) {
  const std::pair<size_t, size_t> pairs[] = {
      {1 << 20, 600 << 10}, {600 << 10, 1 << 20}, {300 << 10, 2 << 20}};
  for (auto [sent, posted] : pairs) {
    // Declared first: they must outlive the transfers still pending.
    std::vector<uint8_t> out(sent, 1), in(posted);
    Ranks ranks = makeRanks(2);
    EXPECT_NE(
        expectSizesThatDifferFailAtOnce(twoOf(ranks), out, in, 2 << 20).code(),
        ncclSuccess)
        << sent << " against " << posted;
  }
}

// Rank 0's smallest part is every rank's: cut by their own (64 KiB and
// 256 KiB), transfers between the two would not meet.
TEST_F(UcxLinkTest, EveryRankCutsAsRankZeroSays) {
  constexpr size_t kRankZeroSplit = 64 * 1024;
  Ranks ranks = makeRanks(
      2, nullptr, 4, kUcxPartBytes, GpuBuffers::kAuto,
      [](int rank) { return rank == 0 ? kRankZeroSplit : kUcxSplitBytes; });
  exchangeAll(ranks.sets(), {2 * kRankZeroSplit - 1, 2 * kRankZeroSplit,
                             3 * kRankZeroSplit, 2 * kUcxSplitBytes + 1});
}

// HETCCL_UCX_SPLIT: 0 (the default) leaves the smallest part to the cores,
// where the link set starts; a size stands, and one under 4 KiB is refused.
TEST(UcxSettings, TheSmallestPartIsASizeOrLeftToTheCores) {
  {
    ScopedEnv split("HETCCL_UCX_SPLIT", nullptr);
    EXPECT_EQ(0u, UcxSettings::fromEnvironment().splitBytes);
  }
  {
    ScopedEnv split("HETCCL_UCX_SPLIT", "128K");
    EXPECT_EQ(128u * 1024, UcxSettings::fromEnvironment().splitBytes);
  }
  ScopedEnv split("HETCCL_UCX_SPLIT", "1K");
  EXPECT_EQ(expectError([] { UcxSettings::fromEnvironment(); }).code(),
            ncclInvalidArgument);
}

// HETCCL_UCX_GPU: a GPU's buffers go to UCX as they are by default where
// UCX moves their memory over RDMA (always for host memory, a GPU emulated
// on the host), never with 0, wherever UCX knows the memory type with 1,
// and with 1 a type UCX lacks fails with what to do.
TEST_F(UcxLinkTest, GpuBuffersGoToUcxWhereItMovesTheirMemory) {
  const bool ucxHasCuda = ucxLibrary().memoryKinds() & kCudaMemory;
  {
    Ranks ranks = makeRanks(2, nullptr, 1, kUcxPartBytes, GpuBuffers::kAuto);
    const auto link = ranks.transports[0]->link(1);
    EXPECT_TRUE(link->movesGpuMemory(kHostMemory));
    EXPECT_EQ(link->movesGpuMemory(kCudaMemory),
              ucxHasCuda && ucxLibrary().hasRdma());
  }
  {
    Ranks ranks = makeRanks(2, nullptr, 1, kUcxPartBytes, GpuBuffers::kStaged);
    const auto link = ranks.transports[0]->link(1);
    EXPECT_FALSE(link->movesGpuMemory(kHostMemory));
    EXPECT_FALSE(link->movesGpuMemory(kCudaMemory));
    EXPECT_EQ(expectError([&] {
                link->sendGpu(kHostMemory, "x", 1, kTestCall);
              }).code(),
              ncclInvalidArgument);
  }
  Ranks ranks = makeRanks(2, nullptr, 1, kUcxPartBytes, GpuBuffers::kRequired);
  const auto link = ranks.transports[0]->link(1);
  EXPECT_TRUE(link->movesGpuMemory(kHostMemory));
  if (ucxHasCuda) return;
  Error e = expectError([&] { link->movesGpuMemory(kCudaMemory); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("HETCCL_UCX_GPU=1, but UCX here "
                                       "cannot move cuda memory"),
            std::string::npos)
      << e.what();
}

// The policy alone, for what this machine's UCX cannot show (CUDA memory,
// RDMA).
TEST(UcxGpuPolicy, EveryModeWithAndWithoutRdmaAndTheMemoryType) {
  const unsigned withCuda = kHostMemory | kCudaMemory;
  using Mode = GpuBuffers;
  EXPECT_TRUE(takesGpuMemory({Mode::kAuto, withCuda, true}, kCudaMemory));
  EXPECT_FALSE(takesGpuMemory({Mode::kAuto, withCuda, false}, kCudaMemory));
  EXPECT_FALSE(takesGpuMemory({Mode::kAuto, kHostMemory, true}, kCudaMemory));
  EXPECT_FALSE(takesGpuMemory({Mode::kAuto, withCuda, true}, kHipMemory));
  EXPECT_TRUE(takesGpuMemory({Mode::kRequired, withCuda, false}, kCudaMemory));
  EXPECT_FALSE(takesGpuMemory({Mode::kStaged, withCuda, true}, kCudaMemory));
  EXPECT_FALSE(takesGpuMemory({Mode::kStaged, withCuda, true}, kHostMemory));
  for (Mode mode : {Mode::kAuto, Mode::kRequired})
    EXPECT_TRUE(takesGpuMemory({mode, kHostMemory, false}, kHostMemory));
  Error e = expectError([&] {
    takesGpuMemory({Mode::kRequired, withCuda, true}, kHipMemory);
  });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("cannot move rocm memory (its memory "
                                       "types: host, cuda)"),
            std::string::npos)
      << e.what();
}

// HETCCL_UCX_GPU=0 is worth a warning only where auto would have handed
// the buffers over.
TEST(UcxGpuPolicy, StagingIsNeedlessOnlyWhereAutoTakesTheBuffers) {
  const unsigned withCuda = kHostMemory | kCudaMemory;
  using Mode = GpuBuffers;
  EXPECT_EQ(needlessStaging({Mode::kStaged, withCuda, true}, kCudaMemory),
            "HETCCL_UCX_GPU=0, though UCX here moves cuda memory itself (with "
            "RDMA); unset HETCCL_UCX_GPU");
  EXPECT_NE(needlessStaging({Mode::kStaged, kHostMemory, false}, kHostMemory),
            "");
  EXPECT_EQ(needlessStaging({Mode::kStaged, withCuda, false}, kCudaMemory), "");
  EXPECT_EQ(needlessStaging({Mode::kStaged, kHostMemory, true}, kCudaMemory),
            "");
  for (Mode mode : {Mode::kAuto, Mode::kRequired})
    EXPECT_EQ(needlessStaging({mode, withCuda, true}, kCudaMemory), "");
}

// What hetcclCommGpuBuffers and the doctor say of each case.
TEST(UcxGpuPolicy, WhereGpuBuffersGoIsSaidWithWhy) {
  const unsigned withCuda = kHostMemory | kCudaMemory;
  using Mode = GpuBuffers;
  EXPECT_EQ(ucxGpuMemoryPath({Mode::kAuto, withCuda, true}, kCudaMemory),
            "handed to UCX as they are (cuda memory, over RDMA)");
  EXPECT_EQ(ucxGpuMemoryPath({Mode::kRequired, withCuda, false}, kCudaMemory),
            "handed to UCX as they are (cuda memory; HETCCL_UCX_GPU=1 without "
            "RDMA: UCX copies them itself)");
  EXPECT_EQ(ucxGpuMemoryPath({Mode::kAuto, kHostMemory, false}, kHostMemory),
            "handed to UCX as they are (a GPU emulated in host memory)");
  EXPECT_EQ(ucxGpuMemoryPath({Mode::kAuto, withCuda, false}, kCudaMemory),
            "staged through host memory: UCX here has no RDMA transport, and "
            "its own copies of cuda memory are slower than staging");
  EXPECT_EQ(ucxGpuMemoryPath({Mode::kAuto, kHostMemory, true}, kCudaMemory),
            "staged through host memory: UCX here does not move cuda memory "
            "(its memory types: host; ucx_info -v shows how it was built)");
  EXPECT_EQ(ucxGpuMemoryPath({Mode::kStaged, withCuda, false}, kCudaMemory),
            "staged through host memory (HETCCL_UCX_GPU=0)");
  EXPECT_EQ(ucxGpuMemoryPath({Mode::kStaged, withCuda, true}, kCudaMemory),
            "staged through host memory: " +
                needlessStaging({Mode::kStaged, withCuda, true}, kCudaMemory));
}

// A side that hands over its GPU buffers sends the same messages as one
// that stages them: each matches the other's plain transfers.
TEST_F(UcxLinkTest, GpuTransfersMatchHostTransfers) {
  Ranks ranks = makeRanks(2);
  for (size_t bytes : {size_t{1}, size_t{4097}, (size_t{3} << 20) + 5}) {
    const std::vector<uint8_t> out = makePayload(0, 1, 0, bytes);
    std::vector<uint8_t> in(bytes), back(bytes);
    Link& zero = *ranks.transports[0]->link(1);
    Link& one = *ranks.transports[1]->link(0);
    auto send = zero.sendGpu(kHostMemory, out.data(), bytes, kTestCall);
    one.recv(in.data(), bytes, kTestCall)
        ->wait(AbortSignal(), kLinkWaitSeconds);
    send->wait(AbortSignal(), kLinkWaitSeconds);
    EXPECT_EQ(firstMismatch(in, 0, 1, 0), -1) << bytes << " bytes";
    send = one.send(in.data(), bytes, kTestCall);
    zero.recvGpu(kHostMemory, back.data(), bytes, kTestCall)
        ->wait(AbortSignal(), kLinkWaitSeconds);
    send->wait(AbortSignal(), kLinkWaitSeconds);
    EXPECT_EQ(back, out) << bytes << " bytes";
    EXPECT_EQ(zero.bytesSent(), one.bytesReceived());
  }
}

TEST_F(UcxLinkTest, ASilentPeerTimesOutAsARemoteError) {
  Ranks ranks = makeRanks(2);
  expectSilentPeerTimesOut(*ranks.transports[0]->link(1));
}

TEST_F(UcxLinkTest, RanksWithoutPeersLoadNothingAndGetNoLinks) {
  // Ranks 0 and 1 are linked; rank 2 takes part in the setup only.
  Ranks ranks = makeRanks(3, [](int rank) {
    return rank == 2 ? std::vector<int>{} : std::vector<int>{1 - rank};
  });
  EXPECT_EQ(expectError([&] { ranks.transports[2]->link(0); }).code(),
            ncclInvalidArgument);
  exchangeAll({ranks.transports[0].get(), ranks.transports[1].get()},
              {1, 70000});
}

}  // namespace
}  // namespace hetccl
