// The shm transport: transfers of every size in both directions at once,
// ordering, counters, rings of different geometry per sender, the
// deadlock-prone pattern (big sends both ways, waiting on the send),
// receives that combine what arrives with a local buffer, size
// mismatches reported on both ends, and prompt ends of waits on abort,
// peer loss and timeout. Ranks are threads of this process meeting through
// an in-process Oob, and once two processes meeting through pipes.
#include "transport/shm/shm_link_set.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/elapsed.h"
#include "support/expect_error.h"
#include "support/in_process_oob.h"
#include "support/link_ranks.h"
#include "support/scoped_env.h"
#include "support/thread_ranks.h"
#include "transport/shm/shm_link_layout.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr double kWaitSeconds = 20;
constexpr size_t kMiB = size_t{1} << 20;

// One transport per rank, created together.
struct Ranks {
  std::unique_ptr<InProcessWorld> world;
  std::vector<std::unique_ptr<InProcessOob>> oobs;
  std::vector<std::shared_ptr<AbortSignal>> aborts;
  std::vector<std::shared_ptr<PeerLiveness>> liveness;
  std::vector<std::shared_ptr<CallLog>> calls;
  std::vector<std::unique_ptr<ShmLinkSet>> transports;

  std::shared_ptr<Link> link(int from, int to) {
    return transports[from]->link(to);
  }
};

// The ring geometry the tests' sizes are written for (4 slots of 1 MiB),
// whatever the library's defaults; transfers moved only by the ranks
// themselves unless `thread`.
ShmLinkSettings testGeometry(bool thread = false) {
  ShmLinkSettings settings;
  settings.slots = 4;
  settings.chunkBytes = size_t{1} << 20;
  settings.progressThread = thread ? ShmLinkSettings::ProgressThread::kAlways
                                   : ShmLinkSettings::ProgressThread::kNever;
  return settings;
}

struct RankOptions {
  std::function<std::vector<int>(int)> peersOf;
  // Without it: testGeometry(). Returning nullopt: the environment's.
  std::function<ShmLinkSettings(int)> settingsOf;
};

Ranks makeRanks(int nranks, const RankOptions& options = {}) {
  Ranks ranks;
  ranks.world = std::make_unique<InProcessWorld>(nranks);
  ranks.transports.resize(nranks);
  for (int r = 0; r < nranks; ++r) {
    ranks.oobs.push_back(std::make_unique<InProcessOob>(*ranks.world, r));
    ranks.aborts.push_back(std::make_shared<AbortSignal>());
    ranks.liveness.push_back(std::make_shared<PeerLiveness>(nranks));
    ranks.calls.push_back(std::make_shared<CallLog>());
  }
  runRanks(nranks, [&](int r) {
    std::vector<int> peers =
        options.peersOf ? options.peersOf(r) : everyoneBut(r, nranks);
    ShmLinkSettings settings =
        options.settingsOf ? options.settingsOf(r) : testGeometry();
    ranks.transports[r] = std::make_unique<ShmLinkSet>(
        *ranks.oobs[r], peers, settings, ranks.aborts[r], ranks.liveness[r],
        ranks.calls[r]);
  });
  return ranks;
}

bool contains(const Error& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

// Every rank sends `sizes` to each of its peers and receives the same
// from each; a transfer must be complete once a later one on its link is.
void exchangeAll(Ranks& ranks, const std::vector<size_t>& sizes) {
  std::vector<LinkSet*> sets;
  for (const auto& set : ranks.transports) sets.push_back(set.get());
  hetccl::exchangeAll(sets, sizes, Completion::kInPostingOrder);
}

TEST(ShmLink, TwoRanksEverySizeBothDirections) {
  Ranks ranks = makeRanks(2);
  EXPECT_EQ(ranks.transports[0]->settings().slots, 4u);
  EXPECT_EQ(ranks.transports[0]->settings().chunkBytes, kMiB);
  exchangeAll(ranks, {0, 1, 4097, kMiB + 3, 32 * kMiB, 0, 7});
}

// Chunks of at most kShmInlineBytes travel in their slot's header line:
// whole small messages, and the short last chunk of a longer one.
TEST(ShmLink, ChunksAroundTheInlineSizeArriveWhole) {
  Ranks ranks = makeRanks(2);
  exchangeAll(ranks, {kShmInlineBytes - 1, kShmInlineBytes, kShmInlineBytes + 1,
                      kMiB + kShmInlineBytes, kMiB + kShmInlineBytes + 1,
                      2 * kMiB + 1, 1});
}

// A combining receive (Link::recvReduce), combined chunk by chunk
// straight from the ring: sizes around a slot and a ring.
TEST(ShmLink, ACombiningReceiveReducesAsItArrives) {
  Ranks ranks = makeRanks(2);
  expectCombiningReceivesReduce(*ranks.link(0, 1), *ranks.link(1, 0),
                                {1, 7, kMiB / 4 - 1, kMiB / 4 + 3, kMiB + 5});
}

TEST(ShmLink, ThreeRanksManyTransfersInOrder) {
  Ranks ranks = makeRanks(3);
  std::vector<size_t> sizes;
  for (int i = 0; i < 60; ++i)
    sizes.push_back(i % 7 == 0 ? 0 : (static_cast<size_t>(i) * 40009) % 300000);
  exchangeAll(ranks, sizes);
  // The links keep working for a second round.
  exchangeAll(ranks, {kMiB + 3, 1});
}

TEST(ShmLink, EachSenderUsesItsOwnRingGeometry) {
  RankOptions options;
  options.settingsOf = [](int rank) {
    ShmLinkSettings s;
    s.slots = rank == 0 ? 1 : 3;
    s.chunkBytes = rank == 0 ? 4096 : 64 * 1024 + 64;
    return s;
  };
  Ranks ranks = makeRanks(2, options);
  EXPECT_EQ(ranks.transports[0]->settings().slots, 1u);
  EXPECT_EQ(ranks.transports[1]->settings().chunkBytes, 64u * 1024 + 64);
  exchangeAll(ranks, {4095, 4096, 4097, 0, kMiB + 3, 200000, 65600});
}

TEST(ShmLink, EnvironmentSetsTheGeometry) {
  ScopedEnv slots("HETCCL_SHM_LINK_SLOTS", "2");
  ScopedEnv chunk("HETCCL_SHM_LINK_CHUNK", "8K");
  RankOptions fromEnvironment;
  fromEnvironment.settingsOf = [](int) {
    return ShmLinkSettings::fromEnvironment();
  };
  Ranks ranks = makeRanks(2, fromEnvironment);
  EXPECT_EQ(ranks.transports[1]->settings().slots, 2u);
  EXPECT_EQ(ranks.transports[1]->settings().chunkBytes, 8192u);
  exchangeAll(ranks, {8191, 8192, 8193, 100000});
}

// With a progress thread (HETCCL_SHM_LINK_THREAD=1) the same exchanges
// arrive whole and in order, two and three ranks, every size.
TEST(ShmLink, AProgressThreadKeepsEverySizeWholeAndInOrder) {
  RankOptions options;
  options.settingsOf = [](int) { return testGeometry(true); };
  Ranks two = makeRanks(2, options);
  exchangeAll(two, {0, 1, 4097, kMiB + 3, 32 * kMiB, 0, 7});
  Ranks three = makeRanks(3, options);
  std::vector<size_t> sizes;
  for (int i = 0; i < 60; ++i)
    sizes.push_back(i % 7 == 0 ? 0 : (static_cast<size_t>(i) * 40009) % 300000);
  exchangeAll(three, sizes);
}

// A transfer larger than the ring, posted on both ends and then left
// alone (pieces() moves nothing): the progress thread moves it all; without
// it, it stops where the ring was full.
TEST(ShmLink, AProgressThreadMovesWhatNobodyWaitsFor) {
  for (bool thread : {true, false}) {
    RankOptions options;
    options.settingsOf = [thread](int) { return testGeometry(thread); };
    Ranks ranks = makeRanks(2, options);
    const size_t bytes = 16 * kMiB + 3;
    std::vector<uint8_t> out = makePayload(0, 1, 0, bytes);
    std::vector<uint8_t> in(bytes, 0);
    auto send = ranks.link(0, 1)->send(out.data(), bytes, kTestCall);
    auto recv = ranks.link(1, 0)->recv(in.data(), bytes, kTestCall);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(thread ? 20000 : 300);
    while (std::chrono::steady_clock::now() < deadline &&
           recv->pieces().done < 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(recv->pieces().done, thread ? 1u : 0u) << "thread " << thread;
    if (thread) {
      EXPECT_EQ(send->pieces().done, 1u);
      EXPECT_EQ(firstMismatch(in, 0, 1, 0), -1);
    }
    // Either way the waits finish it (each end waits on its own thread,
    // as ranks do).
    std::thread sender([&] { send->wait(AbortSignal(), kWaitSeconds); });
    recv->wait(AbortSignal(), kWaitSeconds);
    sender.join();
    EXPECT_EQ(firstMismatch(in, 0, 1, 0), -1) << "thread " << thread;
  }
}

// auto takes the thread only where every rank of the host can have two
// cores; the environment chooses.
TEST(ShmLink, TheProgressThreadIsChosenByCoresOrTheEnvironment) {
  ShmLinkSettings automatic;
  EXPECT_TRUE(automatic.usesProgressThread(16, 8));
  EXPECT_FALSE(automatic.usesProgressThread(16, 9));
  EXPECT_FALSE(automatic.usesProgressThread(2, 2));
  {
    ScopedEnv never("HETCCL_SHM_LINK_THREAD", "0");
    EXPECT_FALSE(ShmLinkSettings::fromEnvironment().usesProgressThread(64, 1));
  }
  {
    ScopedEnv always("HETCCL_SHM_LINK_THREAD", "1");
    EXPECT_TRUE(ShmLinkSettings::fromEnvironment().usesProgressThread(1, 8));
  }
  ScopedEnv bad("HETCCL_SHM_LINK_THREAD", "yes");
  EXPECT_EQ(expectError([] { ShmLinkSettings::fromEnvironment(); }).code(),
            ncclInvalidArgument);
}

// Each rank posts a send much larger than the ring and then a receive,
// and waits on the send first: only progressing the receive while waiting
// on the send lets either finish.
TEST(ShmLink, BigSendsBothWaysWaitingOnTheSendFirst) {
  for (int nranks : {2, 3}) {
    Ranks ranks = makeRanks(nranks);
    const size_t bytes = 32 * kMiB + 5;
    runRanks(nranks, [&](int r) {
      int to = (r + 1) % nranks, from = (r + nranks - 1) % nranks;
      std::vector<uint8_t> out = makePayload(r, to, 0, bytes);
      std::vector<uint8_t> in(bytes, 0);
      auto send = ranks.link(r, to)->send(out.data(), bytes, kTestCall);
      auto recv = ranks.link(r, from)->recv(in.data(), bytes, kTestCall);
      send->wait(AbortSignal(), kWaitSeconds);
      recv->wait(AbortSignal(), kWaitSeconds);
      EXPECT_EQ(firstMismatch(in, from, r, 0), -1) << "rank " << r;
    });
    for (int r = 0; r < nranks; ++r) {
      EXPECT_EQ(ranks.link(r, (r + 1) % nranks)->bytesSent(), bytes);
      EXPECT_EQ(ranks.link(r, (r + nranks - 1) % nranks)->bytesReceived(),
                bytes);
    }
  }
}

TEST(ShmLink, SendsPostedLongBeforeTheReceives) {
  Ranks ranks = makeRanks(2);
  auto sender = ranks.link(0, 1);
  auto receiver = ranks.link(1, 0);
  constexpr int kTransfers = 100;
  constexpr size_t kBytes = 100003;
  std::vector<std::vector<uint8_t>> out, in;
  std::vector<std::shared_ptr<TransferRequest>> sends, recvs;
  for (int i = 0; i < kTransfers; ++i) {
    out.push_back(makePayload(0, 1, i, kBytes));
    sends.push_back(sender->send(out.back().data(), kBytes, kTestCall));
  }
  // Each message takes a slot of its own: four of them fill the ring, and
  // progress stops there.
  EXPECT_TRUE(sends.front()->done());
  EXPECT_TRUE(sends[3]->done());
  EXPECT_FALSE(sends[4]->done());
  EXPECT_FALSE(sends.back()->done());
  EXPECT_EQ(sender->bytesSent(), 4 * kBytes);
  for (int i = 0; i < kTransfers; ++i) {
    in.emplace_back(kBytes, 0);
    recvs.push_back(receiver->recv(in.back().data(), kBytes, kTestCall));
  }
  // The receiver only drains the ring; the sender's own waits refill it.
  std::thread senderThread([&] {
    for (auto& s : sends) s->wait(AbortSignal(), kWaitSeconds);
  });
  for (int i = 0; i < kTransfers; ++i) {
    recvs[i]->wait(AbortSignal(), kWaitSeconds);
    EXPECT_EQ(firstMismatch(in[i], 0, 1, i), -1) << "transfer " << i;
  }
  senderThread.join();
  EXPECT_EQ(sender->bytesSent(), kTransfers * kBytes);
  EXPECT_EQ(receiver->bytesReceived(), kTransfers * kBytes);
  EXPECT_EQ(sender->bytesReceived(), 0u);
  EXPECT_EQ(receiver->bytesSent(), 0u);
}

TEST(ShmLink, EmptyTransfersCompleteAtOnceInOrder) {
  Ranks ranks = makeRanks(2);
  auto sender = ranks.link(0, 1);
  auto receiver = ranks.link(1, 0);
  // Nothing ahead of them: done without the peer doing anything.
  EXPECT_TRUE(sender->send(nullptr, 0, kTestCall)->done());
  EXPECT_TRUE(receiver->recv(nullptr, 0, kTestCall)->done());
  // Behind a transfer that cannot finish yet, they wait their turn.
  const size_t bytes = 6 * kMiB;
  std::vector<uint8_t> out = makePayload(0, 1, 1, bytes), in(bytes);
  auto bigSend = sender->send(out.data(), bytes, kTestCall);
  auto emptySend = sender->send(nullptr, 0, kTestCall);
  EXPECT_FALSE(bigSend->done());
  EXPECT_FALSE(emptySend->done());
  auto bigRecv = receiver->recv(in.data(), bytes, kTestCall);
  auto emptyRecv = receiver->recv(nullptr, 0, kTestCall);
  std::thread senderThread(
      [&] { emptySend->wait(AbortSignal(), kWaitSeconds); });
  emptyRecv->wait(AbortSignal(), kWaitSeconds);
  EXPECT_TRUE(bigRecv->done());
  senderThread.join();
  EXPECT_TRUE(bigSend->done());
  EXPECT_EQ(firstMismatch(in, 0, 1, 1), -1);
  EXPECT_EQ(sender->bytesSent(), bytes);
  EXPECT_EQ(receiver->bytesReceived(), bytes);
}

TEST(ShmLink, SizeMismatchIsReportedOnBothEnds) {
  Ranks ranks = makeRanks(2);
  std::vector<uint8_t> out(1000, 1), in(1000, 0);
  auto send = ranks.link(0, 1)->send(out.data(), 1000, kTestCall);
  send->wait(AbortSignal(), kWaitSeconds);  // it fits in the ring
  auto recv = ranks.link(1, 0)->recv(in.data(), 999, kTestCall);
  Error e = expectError([&] { recv->wait(AbortSignal(), kWaitSeconds); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(e, "posted 999 bytes but the peer sent 1000"))
      << e.what();
  // The direction stays broken on the receiving end...
  Error again = expectError([&] {
    ranks.link(1, 0)
        ->recv(in.data(), 10, kTestCall)
        ->wait(AbortSignal(), kWaitSeconds);
  });
  EXPECT_EQ(again.code(), ncclInvalidUsage);
  // ...and the sender learns of it on its next send.
  Error senderSide = expectError([&] {
    ranks.link(0, 1)
        ->send(out.data(), 10, kTestCall)
        ->wait(AbortSignal(), kWaitSeconds);
  });
  EXPECT_EQ(senderSide.code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(senderSide,
                       "rank 1 posted 999 bytes but the peer "
                       "(rank 0) sent 1000"))
      << senderSide.what();
  // The other direction is unaffected.
  auto back = ranks.link(1, 0)->send(in.data(), 500, kTestCall);
  auto backRecv = ranks.link(0, 1)->recv(out.data(), 500, kTestCall);
  backRecv->wait(AbortSignal(), kWaitSeconds);
  back->wait(AbortSignal(), kWaitSeconds);
  EXPECT_EQ(ranks.link(0, 1)->bytesReceived(), 500u);
}

TwoRanks twoOf(Ranks& ranks) {
  return {{ranks.transports[0].get(), ranks.transports[1].get()},
          {ranks.aborts[0].get(), ranks.aborts[1].get()},
          {ranks.calls[0].get(), ranks.calls[1].get()}};
}

TEST(ShmLink, CallsThatDisagreeFailBothEnds) {
  Ranks small = makeRanks(2);
  expectCallsThatDisagreeFailBothEnds(twoOf(small));
  // Chunks of their own, not inline in the header line.
  RankOptions tiny;
  tiny.settingsOf = [](int) {
    ShmLinkSettings s;
    s.slots = 2;
    s.chunkBytes = 4096;
    return s;
  };
  Ranks chunked = makeRanks(2, tiny);
  expectCallsThatDisagreeFailBothEnds(twoOf(chunked));
}

TEST(ShmLink, CallsThatDisagreeAreReportedBeforeSizes) {
  Ranks ranks = makeRanks(2);
  expectDisagreementBeforeSizes(twoOf(ranks));
}

TEST(ShmLink, AnUnclaimedTransferOfACallThatDisagreesFailsBothEnds) {
  Ranks ranks = makeRanks(2);
  expectUnclaimedCallThatDisagreesFailsBothEnds(twoOf(ranks));
}

TEST(ShmLink, SaysTheLatestCollectiveThatArrived) {
  Ranks ranks = makeRanks(2);
  expectLatestCallFromFollowsCollectives(twoOf(ranks));
}

// A send meets its receive: their signatures differ in name and peer only.
TEST(ShmLink, ASendAndItsReceiveAgree) {
  Ranks ranks = makeRanks(2);
  CallSignature send;
  send.sequence = 3;
  send.call = OpKind::Send;
  send.count = 100;
  send.dtype = ncclInt32;
  send.root = 1;
  CallSignature receive = send;
  receive.call = OpKind::Recv;
  receive.root = 0;
  std::vector<uint8_t> out = makePayload(0, 1, 0, 400), in(400);
  auto sent = ranks.link(0, 1)->send(out.data(), out.size(), send);
  ranks.link(1, 0)
      ->recv(in.data(), in.size(), receive)
      ->wait(AbortSignal(), kWaitSeconds);
  sent->wait(AbortSignal(), kWaitSeconds);
  EXPECT_EQ(firstMismatch(in, 0, 1, 0), -1);
}

TEST(ShmLink, EmptyAgainstNonEmptyIsAMismatch) {
  std::vector<uint8_t> buffer(100, 7);
  {
    // The peer's message #0 is empty; this rank expects 5 bytes.
    Ranks ranks = makeRanks(2);
    ranks.link(0, 1)
        ->send(nullptr, 0, kTestCall)
        ->wait(AbortSignal(), kWaitSeconds);
    ranks.link(0, 1)
        ->send(buffer.data(), 10, kTestCall)
        ->wait(AbortSignal(), 1);
    Error e = expectError([&] {
      ranks.link(1, 0)
          ->recv(buffer.data(), 5, kTestCall)
          ->wait(AbortSignal(), 5);
    });
    EXPECT_EQ(e.code(), ncclInvalidUsage);
    EXPECT_TRUE(contains(e,
                         "message #0 rank 1 posted 5 bytes but the peer "
                         "sent 0"))
        << e.what();
  }
  {
    // This rank's receive #0 is empty; the peer sent 10 bytes.
    Ranks ranks = makeRanks(2);
    ranks.link(0, 1)
        ->send(buffer.data(), 10, kTestCall)
        ->wait(AbortSignal(), 1);
    ranks.link(0, 1)
        ->send(buffer.data(), 20, kTestCall)
        ->wait(AbortSignal(), 1);
    EXPECT_TRUE(ranks.link(1, 0)->recv(nullptr, 0, kTestCall)->done());
    Error e = expectError([&] {
      ranks.link(1, 0)
          ->recv(buffer.data(), 20, kTestCall)
          ->wait(AbortSignal(), 5);
    });
    EXPECT_EQ(e.code(), ncclInvalidUsage);
    EXPECT_TRUE(contains(e,
                         "message #0 rank 1 posted 0 bytes but the peer "
                         "sent 10"))
        << e.what();
  }
}

// Raises a signal after a delay on another thread; reports when.
class DelayedRaise {
 public:
  DelayedRaise(std::function<void()> raise, int delayMs)
      : thread_([this, raise = std::move(raise), delayMs] {
          std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
          raisedAt_ = Clock::now();
          raise();
        }) {}
  ~DelayedRaise() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  Clock::time_point raisedAt() {
    join();
    return raisedAt_;
  }

 private:
  Clock::time_point raisedAt_;
  std::thread thread_;
};

// Waits on a receive nobody sends; `raise` must end it within 200 ms.
Error waitUntilRaised(Ranks& ranks, const AbortSignal& callerAbort,
                      std::function<void()> raise) {
  std::vector<uint8_t> buffer(1000);
  auto request =
      ranks.link(1, 0)->recv(buffer.data(), buffer.size(), kTestCall);
  DelayedRaise raiser(std::move(raise), 100);
  Error e = expectError([&] { request->wait(callerAbort, kWaitSeconds); });
  double late =
      std::chrono::duration<double>(Clock::now() - raiser.raisedAt()).count();
  EXPECT_LT(late, 0.2) << e.what();
  return e;
}

TEST(ShmLink, TransportAbortEndsAWaitPromptly) {
  Ranks ranks = makeRanks(2);
  Error e = waitUntilRaised(ranks, AbortSignal(), [&] {
    ranks.aborts[1]->raise(ncclInvalidUsage, "the user called abort");
  });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(e, "the user called abort")) << e.what();
  EXPECT_TRUE(contains(e, "a 1000-byte receive from rank 0")) << e.what();
  // done() reports it as well instead of returning false forever.
  std::vector<uint8_t> buffer(10);
  auto later = ranks.link(1, 0)->recv(buffer.data(), 10, kTestCall);
  EXPECT_EQ(expectError([&] { later->done(); }).code(), ncclInvalidUsage);
}

// An abort ends a wait with the thread running, and the transport still
// goes away (its thread joined).
TEST(ShmLink, AnAbortEndsAWaitWithAProgressThread) {
  RankOptions options;
  options.settingsOf = [](int) { return testGeometry(true); };
  Ranks ranks = makeRanks(2, options);
  Error e = waitUntilRaised(ranks, AbortSignal(), [&] {
    ranks.aborts[1]->raise(ncclInvalidUsage, "the user called abort");
  });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  ranks.transports.clear();
}

TEST(ShmLink, CallerAbortEndsAWaitPromptly) {
  Ranks ranks = makeRanks(2);
  AbortSignal callerAbort;
  Error e = waitUntilRaised(ranks, callerAbort, [&] {
    callerAbort.raise(ncclSystemError, "caller gave up");
  });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_TRUE(contains(e, "caller gave up")) << e.what();
}

TEST(ShmLink, PeerLossEndsAWaitPromptly) {
  Ranks ranks = makeRanks(2);
  Error e = waitUntilRaised(ranks, AbortSignal(), [&] {
    ranks.liveness[1]->markLost(0, "rank 0 died");
  });
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_TRUE(contains(e, "rank 0 died")) << e.what();
}

TEST(ShmLink, TimeoutEndsAWaitAndAbortsTheTransport) {
  Ranks ranks = makeRanks(2);
  std::vector<uint8_t> in(5000);
  auto recv = ranks.link(1, 0)->recv(in.data(), in.size(), kTestCall);
  auto start = Clock::now();
  Error e = expectError([&] { recv->wait(AbortSignal(), 0.2); });
  double took = secondsSince(start);
  EXPECT_GE(took, 0.2);
  // SpinWait reads the clock every 64 yields: on oversubscribed cores the
  // timeout fires late, but it fires.
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_TRUE(contains(e, "timed out")) << e.what();
  EXPECT_TRUE(contains(e, "a 5000-byte receive from rank 0")) << e.what();
  // Like every timed-out wait of the library, it aborts the transport.
  EXPECT_TRUE(ranks.aborts[1]->raised());
  EXPECT_EQ(expectError([&] { recv->done(); }).code(), ncclRemoteError);
  // The peer's transport is unaffected.
  EXPECT_FALSE(ranks.aborts[0]->raised());
}

TEST(ShmLink, LinksOnlyWhereAskedAndRanksWithoutPeersJoinSetup) {
  RankOptions options;
  options.peersOf = [](int rank) {
    return rank == 2 ? std::vector<int>{} : std::vector<int>{1 - rank};
  };
  Ranks ranks = makeRanks(3, options);
  EXPECT_EQ(expectError([&] { ranks.link(0, 2); }).code(), ncclInvalidArgument);
  EXPECT_EQ(expectError([&] { ranks.link(2, 0); }).code(), ncclInvalidArgument);
  std::vector<uint8_t> out = makePayload(0, 1, 0, 3 * kMiB), in(3 * kMiB);
  auto send = ranks.link(0, 1)->send(out.data(), out.size(), kTestCall);
  ranks.link(1, 0)
      ->recv(in.data(), in.size(), kTestCall)
      ->wait(AbortSignal(), 20);
  send->wait(AbortSignal(), kWaitSeconds);
  EXPECT_EQ(firstMismatch(in, 0, 1, 0), -1);
}

TEST(ShmLink, BadPeerListsFailOnEveryRank) {
  // Rank 0 links to rank 1, which does not link back.
  std::vector<std::optional<Error>> errors(3);
  auto attempt = [&](std::function<std::vector<int>(int)> peersOf) {
    InProcessWorld world(3);
    errors.assign(3, std::nullopt);
    runRanks(3, [&](int r) {
      InProcessOob oob(world, r);
      try {
        ShmLinkSet transport(oob, peersOf(r), ShmLinkSettings(), nullptr,
                             nullptr);
      } catch (const Error& e) {
        errors[r] = e;
      }
    });
  };
  attempt(
      [](int r) { return r == 0 ? std::vector<int>{1} : std::vector<int>{}; });
  ASSERT_TRUE(errors[0] && errors[1] && errors[2]);
  EXPECT_EQ(errors[0]->code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(*errors[0], "symmetric")) << errors[0]->what();
  EXPECT_EQ(errors[1]->code(), ncclRemoteError);
  // The others say which rank failed and why, not only that it did.
  EXPECT_TRUE(contains(*errors[1], "rank 0 (host ")) << errors[1]->what();
  EXPECT_TRUE(contains(*errors[1], "symmetric")) << errors[1]->what();
  // Both rank 0 and 1 link to rank 2, which links only to rank 1.
  attempt(
      [](int r) { return r == 2 ? std::vector<int>{1} : std::vector<int>{2}; });
  ASSERT_TRUE(errors[0] && errors[1] && errors[2]);
  EXPECT_EQ(errors[0]->code(), ncclInvalidUsage);
  EXPECT_EQ(errors[2]->code(), ncclRemoteError);
  // A rank names itself.
  attempt([](int r) { return std::vector<int>{r}; });
  for (auto& e : errors) {
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ncclInvalidArgument);
  }
}

// Names in /dev/shm that the shm links of process `pid` created.
std::vector<std::string> leftoverSegments(pid_t pid = getpid()) {
  std::vector<std::string> found;
  std::string prefix = "hetccl-link-" + std::to_string(pid) + "-";
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* entry = readdir(dir))
      if (std::string(entry->d_name).rfind(prefix, 0) == 0)
        found.push_back(entry->d_name);
    closedir(dir);
  }
  return found;
}

TEST(ShmLink, NamesAreUnlinkedAndLinksOutliveTheTransport) {
  Ranks ranks = makeRanks(3);
  EXPECT_TRUE(leftoverSegments().empty());
  auto a = ranks.link(0, 2), b = ranks.link(2, 0);
  ranks.transports.clear();
  std::vector<uint8_t> out = makePayload(2, 0, 0, kMiB + 1), in(kMiB + 1);
  auto send = b->send(out.data(), out.size(), kTestCall);
  a->recv(in.data(), in.size(), kTestCall)->wait(AbortSignal(), kWaitSeconds);
  send->wait(AbortSignal(), kWaitSeconds);
  EXPECT_EQ(firstMismatch(in, 2, 0, 0), -1);
}

// Two processes meeting through a pair of pipes.
class PipeOob : public Oob {
 public:
  PipeOob(int rank, int readFd, int writeFd)
      : rank_(rank), readFd_(readFd), writeFd_(writeFd) {}
  int rank() const override { return rank_; }
  int nranks() const override { return 2; }
  void allGather(void* data, size_t bytesPerRank) override {
    auto* bytes = static_cast<char*>(data);
    writeAll(bytes + rank_ * bytesPerRank, bytesPerRank);
    readAll(bytes + (1 - rank_) * bytesPerRank, bytesPerRank);
  }
  void barrier() override {
    char slots[2] = {0, 0};
    allGather(slots, 1);
  }

 private:
  void writeAll(const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(writeFd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) failErrno("pipe write");
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  void readAll(char* p, size_t n) {
    while (n > 0) {
      ssize_t r = ::read(readFd_, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) fail(ncclRemoteError, "the other process went away");
      if (r < 0) failErrno("pipe read");
      p += r;
      n -= static_cast<size_t>(r);
    }
  }

  const int rank_;
  const int readFd_;
  const int writeFd_;
};

// One process's side of the two-process exchange; returns the number of
// problems found (0: all good).
int exchangeAcrossProcesses(int rank, int readFd, int writeFd) {
  const std::vector<size_t> sizes = {0, 1, 12345, kMiB + 3, 9 * kMiB, 0, 77};
  PipeOob oob(rank, readFd, writeFd);
  ShmLinkSet transport(oob, {1 - rank}, ShmLinkSettings(), nullptr, nullptr);
  auto link = transport.link(1 - rank);
  std::vector<std::vector<uint8_t>> out, in;
  std::vector<std::shared_ptr<TransferRequest>> requests;
  size_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(makePayload(rank, 1 - rank, static_cast<int>(i), sizes[i]));
    in.emplace_back(sizes[i], 0);
    requests.push_back(link->send(out.back().data(), sizes[i], kTestCall));
    requests.push_back(link->recv(in.back().data(), sizes[i], kTestCall));
    total += sizes[i];
  }
  for (auto& r : requests) r->wait(AbortSignal(), kWaitSeconds);
  int problems = 0;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (firstMismatch(in[i], 1 - rank, rank, static_cast<int>(i)) != -1)
      ++problems;
  if (link->bytesSent() != total || link->bytesReceived() != total) ++problems;
  // Both sides are done before either unmaps.
  oob.barrier();
  return problems;
}

TEST(ShmLink, TwoProcesses) {
  int toChild[2], toParent[2];
  ASSERT_EQ(pipe(toChild), 0);
  ASSERT_EQ(pipe(toParent), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);  // never outlive a broken test
    close(toChild[1]);
    close(toParent[0]);
    int status = 100;
    try {
      status = exchangeAcrossProcesses(1, toChild[0], toParent[1]);
    } catch (const std::exception& e) {
      fprintf(stderr, "child: %s\n", e.what());
    }
    _exit(status);
  }
  close(toChild[0]);
  close(toParent[1]);
  int problems = -1;
  try {
    problems = exchangeAcrossProcesses(0, toParent[0], toChild[1]);
  } catch (const Error& e) {
    ADD_FAILURE() << "parent: " << e.what();
  }
  close(toChild[1]);
  close(toParent[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(problems, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended with status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(leftoverSegments().empty());
  EXPECT_TRUE(leftoverSegments(child).empty());
}

}  // namespace
}  // namespace hetccl
