// The bootstrap with threads as ranks: joining through the root, the
// out-of-band collectives, and every way it must fail cleanly (missing
// ranks, strangers, wrong secrets, aborts, peers that go away).
#include "bootstrap/bootstrap.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/protocol.h"
#include "bootstrap/root.h"
#include "bootstrap/unique_id.h"
#include "support/elapsed.h"
#include "support/scoped_env.h"
#include "util/error.h"
#include "util/listener.h"
#include "util/socket.h"
#include "util/socket_connect.h"
#include "util/wire.h"

namespace hetccl {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// What each rank tells the others at init.
struct PeerInfo {
  int32_t rank;
  uint32_t check;
  char text[24];
};

PeerInfo infoFor(int rank) {
  PeerInfo info{};
  info.rank = rank;
  info.check = 0x9E3779B9u * static_cast<uint32_t>(rank + 1);
  std::snprintf(info.text, sizeof(info.text), "rank-%d-info", rank);
  return info;
}

struct Outcome {
  std::unique_ptr<Bootstrap> bootstrap;
  ncclResult_t code = ncclSuccess;
  std::string error;
  double seconds = 0;
};

Outcome initRank(const ncclUniqueId& id, int rank, int nranks,
                 double timeout = 10,
                 const std::atomic<bool>* abort = nullptr) {
  Outcome outcome;
  PeerInfo info = infoFor(rank);
  auto start = Clock::now();
  try {
    outcome.bootstrap =
        Bootstrap::init(id, rank, nranks, &info, sizeof(info), abort, timeout);
  } catch (const Error& e) {
    outcome.code = e.code();
    outcome.error = e.what();
  }
  outcome.seconds = secondsSince(start);
  return outcome;
}

// Inits `ranks` (default: all) of an nranks communicator, each on its own
// thread; returns their outcomes indexed by rank.
std::vector<Outcome> initRanks(const ncclUniqueId& id, int nranks,
                               std::vector<int> ranks = {},
                               double timeout = 10) {
  if (ranks.empty())
    for (int r = 0; r < nranks; ++r) ranks.push_back(r);
  std::vector<Outcome> outcomes(static_cast<size_t>(nranks));
  std::vector<std::thread> threads;
  for (int r : ranks)
    threads.emplace_back(
        [&, r] { outcomes[r] = initRank(id, r, nranks, timeout); });
  for (auto& t : threads) t.join();
  return outcomes;
}

std::vector<Outcome> initAllOrFail(const ncclUniqueId& id, int nranks) {
  std::vector<Outcome> outcomes = initRanks(id, nranks);
  for (int r = 0; r < nranks; ++r)
    EXPECT_EQ(outcomes[r].error, "") << "rank " << r;
  return outcomes;
}

// Runs body(rank, bootstrap) on every rank, each on its own thread, and
// reports any exception with its rank.
void onEveryRank(std::vector<Outcome>& ranks,
                 const std::function<void(int, Bootstrap&)>& body) {
  std::vector<std::string> errors(ranks.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(static_cast<int>(r), *ranks[r].bootstrap);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < ranks.size(); ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
}

// A port on 127.0.0.1 that nothing listens on right now.
uint16_t freeLoopbackPort() {
  Listener probe(SocketAddress::loopback(AF_INET));
  return probe.address().port();
}

// A join for `rank` of `nranks` with the id's secret and a peer info, as a
// stranger who knows the secret (HETCCL_COMM_ID without a
// HETCCL_COMM_SECRET) could send it.
std::vector<uint8_t> joinHello(const ncclUniqueId& id, int rank, int nranks) {
  RootHello hello;
  hello.secret = decodeUniqueId(id).secret;
  hello.rank = rank;
  hello.nranks = nranks;
  hello.listenAddress = SocketAddress::loopback(AF_INET, 1);
  hello.peerInfoBytes = sizeof(PeerInfo);
  std::vector<uint8_t> bytes = encodeRootHello(hello);
  PeerInfo info = infoFor(rank);
  const auto* p = reinterpret_cast<const uint8_t*>(&info);
  bytes.insert(bytes.end(), p, p + sizeof(info));
  return bytes;
}

// The root's refusal on `socket`: its code and message.
Error refusalOn(Socket& socket) {
  uint8_t header[kRootReplyHeaderBytes];
  socket.recvAll(header, sizeof(header), Deadline::after(5), nullptr);
  ncclResult_t code = decodeRootReplyHeader(header);
  uint8_t lengthBytes[4];
  socket.recvAll(lengthBytes, sizeof(lengthBytes), Deadline::after(5), nullptr);
  std::string message(WireReader(lengthBytes, 4).u32(), '\0');
  socket.recvAll(&message[0], message.size(), Deadline::after(5), nullptr);
  return Error(code, message);
}

class BootstrapTest : public ::testing::Test {
 protected:
  ScopedEnv commId_{"HETCCL_COMM_ID", nullptr};
  ScopedEnv ncclCommId_{"NCCL_COMM_ID", nullptr};
  ScopedEnv secret_{"HETCCL_COMM_SECRET", nullptr};
  ScopedEnv timeout_{"HETCCL_BOOTSTRAP_TIMEOUT", "10"};
};

class BootstrapSizes : public BootstrapTest,
                       public ::testing::WithParamInterface<int> {};

TEST_P(BootstrapSizes, InitGathersPeerInfo) {
  const int n = GetParam();
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), n);
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(ranks[r].bootstrap);
    Bootstrap& b = *ranks[r].bootstrap;
    EXPECT_EQ(b.rank(), r);
    EXPECT_EQ(b.nranks(), n);
    EXPECT_EQ(b.peerInfoBytes(), sizeof(PeerInfo));
    for (int peer = 0; peer < n; ++peer) {
      PeerInfo expected = infoFor(peer);
      EXPECT_EQ(std::memcmp(b.peerInfo(peer), &expected, sizeof(expected)), 0)
          << "rank " << r << " has wrong info for rank " << peer;
      EXPECT_NE(b.listenAddress(peer).port(), 0);
    }
  }
}

TEST_P(BootstrapSizes, AllGatherBroadcastBarrier) {
  const int n = GetParam();
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), n);
  onEveryRank(ranks, [n](int rank, Bootstrap& b) {
    std::vector<uint64_t> slots(3 * n, 0);
    for (int k = 0; k < 3; ++k) slots[3 * rank + k] = 1000u * rank + k;
    b.allGather(slots.data(), 3 * sizeof(uint64_t), 11);
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < 3; ++k)
        EXPECT_EQ(slots[3 * r + k], 1000u * r + k) << "rank " << rank;

    for (int root = 0; root < n; ++root) {
      std::vector<int32_t> value(5, rank == root ? 77 + root : -1);
      b.broadcast(value.data(), value.size() * sizeof(int32_t), root,
                  200 + root);
      for (int32_t v : value) EXPECT_EQ(v, 77 + root) << "rank " << rank;
    }
    b.barrier(12);
    b.barrier(12);
  });
}

TEST_P(BootstrapSizes, TaggedSendRecvOutOfOrder) {
  const int n = GetParam();
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), n);
  auto payload = [](int from, int to, uint32_t tag) {
    return std::vector<int32_t>{from, to, static_cast<int32_t>(tag),
                                from * 100 + to * 10 + static_cast<int>(tag)};
  };
  onEveryRank(ranks, [&](int rank, Bootstrap& b) {
    for (int peer = 0; peer < n; ++peer)
      for (uint32_t tag : {1u, 2u, 3u}) {
        auto message = payload(rank, peer, tag);
        b.send(peer, tag, message.data(), message.size() * sizeof(int32_t));
      }
    // Receive in another order than sent, peers backwards.
    for (int peer = n - 1; peer >= 0; --peer)
      for (uint32_t tag : {3u, 1u, 2u}) {
        std::vector<int32_t> got(4, 0);
        b.recv(peer, tag, got.data(), got.size() * sizeof(int32_t));
        EXPECT_EQ(got, payload(peer, rank, tag)) << "rank " << rank;
      }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, BootstrapSizes,
                         ::testing::Values(1, 2, 3, 4, 8));

TEST_F(BootstrapTest, TryRecvAnyTakesWhatArrivedFromAnyPeerWithoutWaiting) {
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), 3);
  Bootstrap& zero = *ranks[0].bootstrap;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(zero.tryRecvAny(77).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(100));
  for (int from : {1, 2}) {
    const int32_t value = 10 * from;
    ranks[from].bootstrap->send(0, 77, &value, sizeof(value));
    ranks[from].bootstrap->send(0, 78, &value, sizeof(value));
  }
  // Both tag-77 messages, in any order, and none of tag 78.
  std::vector<int> senders;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (senders.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    if (auto message = zero.tryRecvAny(77)) {
      ASSERT_EQ(message->second.size(), sizeof(int32_t));
      int32_t value = 0;
      std::memcpy(&value, message->second.data(), sizeof(value));
      EXPECT_EQ(value, 10 * message->first);
      senders.push_back(message->first);
    }
  }
  std::sort(senders.begin(), senders.end());
  EXPECT_EQ(senders, (std::vector<int>{1, 2}));
  EXPECT_FALSE(zero.tryRecvAny(77).has_value());
  // What it read for another tag waits for its receive.
  for (int from : {1, 2}) {
    int32_t value = 0;
    zero.recv(from, 78, &value, sizeof(value));
    EXPECT_EQ(value, 10 * from);
  }
}

TEST_F(BootstrapTest, RingOfLargeMessagesDoesNotDeadlock) {
  // Every rank sends before it receives, with messages larger than the
  // kernel's socket buffers can hold: sends must drain incoming data.
  const int n = 3;
  const size_t bytes = 48u << 20;
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), n);
  onEveryRank(ranks, [&](int rank, Bootstrap& b) {
    std::vector<uint8_t> out(bytes, static_cast<uint8_t>(rank + 1));
    std::vector<uint8_t> in(bytes, 0);
    b.send((rank + 1) % n, 9, out.data(), bytes);
    b.recv((rank + n - 1) % n, 9, in.data(), bytes);
    uint8_t expected = static_cast<uint8_t>((rank + n - 1) % n + 1);
    EXPECT_EQ(in.front(), expected);
    EXPECT_EQ(in.back(), expected);
    EXPECT_EQ(std::count(in.begin(), in.end(), expected),
              static_cast<long>(bytes));
  });
}

TEST_F(BootstrapTest, ConcurrentCallsFromSeveralThreads) {
  const int n = 3;
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), n);
  onEveryRank(ranks, [n](int rank, Bootstrap& b) {
    auto work = [&](uint32_t tag) {
      for (int iteration = 0; iteration < 30; ++iteration) {
        std::vector<int32_t> slots(n, -1);
        slots[rank] = rank * 1000 + iteration + static_cast<int>(tag);
        b.allGather(slots.data(), sizeof(int32_t), tag);
        for (int r = 0; r < n; ++r)
          EXPECT_EQ(slots[r], r * 1000 + iteration + static_cast<int>(tag));
      }
    };
    std::thread other([&] { work(21); });
    work(22);
    other.join();
  });
}

TEST_F(BootstrapTest, MissingRankIsNamedWithinTheTimeout) {
  ScopedEnv timeout("HETCCL_BOOTSTRAP_TIMEOUT", "1.5");
  std::vector<Outcome> ranks =
      initRanks(createUniqueId(), 4, {0, 1, 3}, /*timeout=*/1.5);
  for (int r : {0, 1, 3}) {
    EXPECT_EQ(ranks[r].code, ncclSystemError) << "rank " << r;
    EXPECT_TRUE(contains(ranks[r].error, "rank(s) 2 never arrived"))
        << "rank " << r << ": " << ranks[r].error;
    EXPECT_TRUE(contains(ranks[r].error, "bootstrap of rank"))
        << ranks[r].error;
    EXPECT_GE(ranks[r].seconds, 1.3);
    EXPECT_LT(ranks[r].seconds, 2.5);
  }
}

TEST_F(BootstrapTest, StrangersAtTheRootAreDroppedAndInitSucceeds) {
  ncclUniqueId id = createUniqueId();
  SocketAddress root = decodeUniqueId(id).root;
  Socket garbage = connectTo(root, Deadline::after(5), nullptr, "root");
  const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  garbage.sendAll(http, sizeof(http) - 1, Deadline::after(5), nullptr);
  Socket silent = connectTo(root, Deadline::after(5), nullptr, "root");
  // Right magic, then nonsense: must not confuse the root either.
  Socket halfRight = connectTo(root, Deadline::after(5), nullptr, "root");
  RootHello hello;
  hello.rank = 0;
  hello.nranks = 3;
  hello.listenAddress = SocketAddress::loopback(AF_INET, 1);
  std::vector<uint8_t> bytes = encodeRootHello(hello);
  bytes[4] = 99;  // protocol version
  halfRight.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);

  auto start = Clock::now();
  std::vector<Outcome> ranks = initAllOrFail(id, 3);
  EXPECT_LT(secondsSince(start), 3.0) << "a silent stranger held ranks up";

  // The garbage sender was disconnected; the misversioned one was told why.
  char byte;
  Error e(ncclSuccess, "");
  try {
    garbage.recvAll(&byte, 1, Deadline::after(2), nullptr);
  } catch (const Error& error) {
    e = error;
  }
  EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
  uint8_t reply[kRootReplyHeaderBytes];
  halfRight.recvAll(reply, sizeof(reply), Deadline::after(2), nullptr);
  EXPECT_EQ(decodeRootReplyHeader(reply), ncclInvalidArgument);
}

// More silent connections than the root lets wait for a hello: the oldest
// are dropped at once, not after the hello deadline, and ranks still get
// in.
TEST_F(BootstrapTest, ASilentFloodAtTheRootIsCapped) {
  ncclUniqueId id = createUniqueId();
  SocketAddress root = decodeUniqueId(id).root;
  std::vector<Socket> silent;
  for (size_t i = 0; i < kMaxPendingConnections + 20; ++i)
    silent.push_back(connectTo(root, Deadline::after(5), nullptr, "root"));
  auto start = Clock::now();
  char byte;
  try {
    silent[0].recvAll(&byte, 1, Deadline::after(3), nullptr);
    ADD_FAILURE() << "the root sent data to a silent stranger";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
  }
  EXPECT_LT(secondsSince(start), 3.0) << "the oldest waited for its deadline";
  initAllOrFail(id, 2);
}

// Strangers dropped at the root are warnings for the first few, then one
// in every 1000 (the others INFO), as at a rank's listener: 2,000 of them
// make a dozen warnings, not 2,000, and the ranks still get in.
TEST_F(BootstrapTest, TheRootThrottlesItsWarningsAboutStrangers) {
  constexpr int kStrangers = 2000, kBatch = 100;
  ncclUniqueId id = createUniqueId();
  const SocketAddress root = decodeUniqueId(id).root;
  const char http[] = "GET / HTTP/1.1\r\n\r\n";
  ::testing::internal::CaptureStderr();
  for (int sent = 0; sent < kStrangers; sent += kBatch) {
    std::vector<Socket> batch;
    for (int i = 0; i < kBatch; ++i) {
      batch.push_back(connectTo(root, Deadline::after(5), nullptr, "root"));
      batch.back().sendAll(http, sizeof(http) - 1, Deadline::after(5), nullptr);
    }
    // Each is dropped before the next batch comes.
    for (Socket& stranger : batch) {
      char byte;
      try {
        stranger.recvAll(&byte, 1, Deadline::after(5), nullptr);
        ADD_FAILURE() << "the root answered a stranger";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
      }
    }
  }
  initAllOrFail(id, 2);
  const std::string log = ::testing::internal::GetCapturedStderr();
  int warnings = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    warnings += contains(line, "HETCCL WARN") &&
                contains(line, "bootstrap root at " + root.toString() +
                                   ": dropped connection");
  EXPECT_EQ(warnings, 12) << log;  // the first 10, the 1000th, the 2000th
  EXPECT_TRUE(contains(log,
                       "(2000 dropped so far; from the 10th on, one in "
                       "1000 is logged at WARN"))
      << log;
}

TEST_F(BootstrapTest, StrangersAtARankAreDropped) {
  ncclUniqueId id = createUniqueId();
  std::vector<Outcome> ranks = initAllOrFail(id, 2);
  const SocketAddress& rank0 = ranks[0].bootstrap->listenAddress(0);
  Socket garbage = connectTo(rank0, Deadline::after(5), nullptr, "rank 0");
  garbage.sendAll("hello?", 6, Deadline::after(5), nullptr);
  // A well-formed peer hello with the wrong secret.
  Socket forged = connectTo(rank0, Deadline::after(5), nullptr, "rank 0");
  PeerHello hello;
  hello.secret = decodeUniqueId(id).secret;
  hello.secret[0] ^= 1;
  hello.from = 1;
  hello.to = 0;
  hello.nranks = 2;
  std::vector<uint8_t> bytes = encodePeerHello(hello);
  forged.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);

  int value = 5, got = 0;
  ranks[1].bootstrap->send(0, 8, &value, sizeof(value));
  ranks[0].bootstrap->recv(1, 8, &got, sizeof(got));
  EXPECT_EQ(got, 5);
  for (Socket* stranger : {&garbage, &forged}) {
    char byte;
    try {
      stranger->recvAll(&byte, 1, Deadline::after(2), nullptr);
      ADD_FAILURE() << "a stranger got data";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
    }
  }
}

// A flood of strangers at a rank's listener is dropped and forgotten: the
// rank keeps only its peers' connections, and still talks to them.
TEST_F(BootstrapTest, DroppedStrangersAreForgotten) {
  ncclUniqueId id = createUniqueId();
  std::vector<Outcome> ranks = initAllOrFail(id, 2);
  const SocketAddress& rank0 = ranks[0].bootstrap->listenAddress(0);
  for (int i = 0; i < 300; ++i) {
    Socket stranger = connectTo(rank0, Deadline::after(5), nullptr, "rank 0");
    stranger.sendAll("nope", 4, Deadline::after(5), nullptr);
  }
  for (int round = 0; round < 3; ++round) {
    int value = round, got = -1;
    ranks[1].bootstrap->send(0, 9, &value, sizeof(value));
    ranks[0].bootstrap->recv(1, 9, &got, sizeof(got));
    EXPECT_EQ(got, round);
  }
  EXPECT_LE(ranks[0].bootstrap->incomingConnectionsHeld(), 2u);
}

// The same cap at a rank's own listener: a flood of silent connections
// loses its oldest at once while the rank waits for a peer's message, and
// the peer still gets through.
TEST_F(BootstrapTest, ASilentFloodAtARankIsCapped) {
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), 2);
  const SocketAddress& rank0 = ranks[0].bootstrap->listenAddress(0);
  std::vector<Socket> silent;
  for (size_t i = 0; i < kMaxPendingConnections + 20; ++i)
    silent.push_back(connectTo(rank0, Deadline::after(5), nullptr, "rank 0"));
  int got = 0;
  std::thread receiver([&] { ranks[0].bootstrap->recv(1, 9, &got, 4); });
  auto start = Clock::now();
  char byte;
  try {
    silent[0].recvAll(&byte, 1, Deadline::after(3), nullptr);
    ADD_FAILURE() << "rank 0 sent data to a silent stranger";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
  }
  EXPECT_LT(secondsSince(start), 3.0) << "the oldest waited for its deadline";
  int value = 17;
  ranks[1].bootstrap->send(0, 9, &value, sizeof(value));
  receiver.join();
  EXPECT_EQ(got, 17);
}

// Rank 2 leaves before an all-gather that the others enter; rank 3, which
// waits for rank 2 but never had a connection from it, would wait out the
// timeout (10 s here) and rank 0 behind it. Rank 1, whose send to rank 2
// is refused, tells everyone it gave up that exchange, and all fail at
// once, naming the cause. Exchanges with other tags are unaffected.
TEST_F(BootstrapTest, ARankThatGivesUpAnExchangeTellsTheOthers) {
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), 4);
  ranks[2].bootstrap.reset();
  constexpr uint32_t kTag = 5;
  std::vector<std::string> errors(4);
  std::vector<double> seconds(4);
  std::vector<std::thread> threads;
  for (int r : {0, 1, 3})
    threads.emplace_back([&, r] {
      std::vector<int> slots(4, r);
      auto start = Clock::now();
      try {
        ranks[r].bootstrap->allGather(slots.data(), sizeof(int), kTag);
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
        errors[r] = e.what();
      }
      seconds[r] = secondsSince(start);
    });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(contains(errors[1], "rank 2")) << errors[1];
  for (int r : {0, 3}) {
    EXPECT_TRUE(contains(errors[r], "rank 1 gave up that exchange"))
        << "rank " << r << ": " << errors[r];
    EXPECT_LT(seconds[r], 3.0) << "rank " << r;
  }
  int value = 8, got = 0;
  ranks[3].bootstrap->send(0, kTag + 1, &value, sizeof(value));
  ranks[0].bootstrap->recv(3, kTag + 1, &got, sizeof(got));
  EXPECT_EQ(got, 8);
}

size_t residentBytes() {
  size_t pages = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> pages >> resident;
  return resident * 4096;
}

// A peer with the secret whose message header claims 1 GiB and then sends
// a few bytes: the rank's memory grows with what arrives, not with the
// claim.
TEST_F(BootstrapTest, AFrameHeaderThatLiesCostsOnlyWhatArrives) {
  ncclUniqueId id = createUniqueId();
  std::vector<Outcome> ranks = initAllOrFail(id, 3);
  Socket liar = connectTo(ranks[0].bootstrap->listenAddress(0),
                          Deadline::after(5), nullptr, "rank 0");
  PeerHello hello;
  hello.secret = decodeUniqueId(id).secret;
  hello.from = 2;
  hello.to = 0;
  hello.nranks = 3;
  std::vector<uint8_t> bytes = encodePeerHello(hello);
  WireWriter w(&bytes);
  w.u32(7);
  w.u64(uint64_t{1} << 30);
  bytes.resize(bytes.size() + 100, 0xab);
  const size_t before = residentBytes();
  liar.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);
  int value = 1, got = 0;
  ranks[1].bootstrap->send(0, 8, &value, sizeof(value));
  ranks[0].bootstrap->recv(1, 8, &got, sizeof(got));
  EXPECT_EQ(got, 1);
  EXPECT_LT(residentBytes(), before + (64u << 20));
}

// A hello with the secret that claims a huge communicator costs the root
// nothing: beyond kMaxRanks it is refused before it fixes the rank count,
// and below it the root holds what arrived, not a seat per claimed rank.
// The root keeps serving, and the real ranks complete at once.
TEST_F(BootstrapTest, AHugeRankCountClaimCostsTheRootNothing) {
  ncclUniqueId id = createUniqueId();
  const SocketAddress root = decodeUniqueId(id).root;
  const size_t before = residentBytes();
  for (int nranks : {10 * 1000 * 1000, std::numeric_limits<int>::max()}) {
    Socket claim = connectTo(root, Deadline::after(5), nullptr, "root");
    std::vector<uint8_t> bytes = joinHello(id, nranks - 1, nranks);
    claim.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);
    Error refusal = refusalOn(claim);
    EXPECT_EQ(refusal.code(), ncclInvalidArgument) << refusal.what();
    EXPECT_TRUE(contains(refusal.what(), "more than the maximum of " +
                                             std::to_string(kMaxRanks)))
        << refusal.what();
  }
  {
    // The largest count allowed, held while the memory is measured.
    Socket claim = connectTo(root, Deadline::after(5), nullptr, "root");
    std::vector<uint8_t> bytes = joinHello(id, kMaxRanks - 1, kMaxRanks);
    claim.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_LT(residentBytes(), before + (32u << 20));
  }
  // Gone again: the rank count it claimed no longer binds anyone.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto start = Clock::now();
  initAllOrFail(id, 3);
  EXPECT_LT(secondsSince(start), 3.0);
  EXPECT_LT(residentBytes(), before + (32u << 20));
  Outcome tooMany = initRank(id, 0, kMaxRanks + 1);
  EXPECT_EQ(tooMany.code, ncclInvalidArgument) << tooMany.error;
}

// The root keeps each joining rank's peer info until all have joined: a
// join claiming more than a few KiB is refused before anything is
// allocated for it, and a rank is not let to try.
TEST_F(BootstrapTest, OversizedPeerInfoIsRefused) {
  ncclUniqueId id = createUniqueId();
  std::vector<char> info(kMaxPeerInfoBytes + 1, 'x');
  Outcome local;
  try {
    Bootstrap::init(id, 0, 2, info.data(), info.size(), nullptr, 10);
  } catch (const Error& e) {
    local.code = e.code();
  }
  EXPECT_EQ(local.code, ncclInvalidArgument);

  Socket joiner =
      connectTo(decodeUniqueId(id).root, Deadline::after(5), nullptr, "root");
  RootHello hello;
  hello.secret = decodeUniqueId(id).secret;
  hello.rank = 1;
  hello.nranks = 2;
  hello.listenAddress = SocketAddress::loopback(AF_INET, 1);
  hello.peerInfoBytes = kMaxPeerInfoBytes + 1;
  std::vector<uint8_t> bytes = encodeRootHello(hello);
  joiner.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);
  uint8_t reply[kRootReplyHeaderBytes];
  joiner.recvAll(reply, sizeof(reply), Deadline::after(5), nullptr);
  EXPECT_EQ(decodeRootReplyHeader(reply), ncclInvalidArgument);
}

TEST_F(BootstrapTest, WrongSecretIsRefused) {
  ncclUniqueId id = createUniqueId();
  UniqueIdContents forged = decodeUniqueId(id);
  forged.secret[3] ^= 0x10;
  Outcome stranger = initRank(encodeUniqueId(forged), 1, 2);
  EXPECT_EQ(stranger.code, ncclInvalidArgument);
  EXPECT_TRUE(contains(stranger.error, "wrong secret")) << stranger.error;
  EXPECT_LT(stranger.seconds, 3.0);
  initAllOrFail(id, 2);
}

TEST_F(BootstrapTest, DuplicateRankIsRefused) {
  ncclUniqueId id = createUniqueId();
  Outcome first;
  std::thread firstThread([&] { first = initRank(id, 0, 2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Outcome duplicate = initRank(id, 0, 2);
  EXPECT_EQ(duplicate.code, ncclInvalidUsage);
  EXPECT_TRUE(contains(duplicate.error, "rank 0 joined twice"))
      << duplicate.error;
  EXPECT_TRUE(contains(duplicate.error, "used by two communicators"))
      << duplicate.error;
  Outcome second = initRank(id, 1, 2);
  firstThread.join();
  EXPECT_EQ(first.error, "");
  EXPECT_EQ(second.error, "");
}

TEST_F(BootstrapTest, InconsistentRankCountIsRefused) {
  ncclUniqueId id = createUniqueId();
  Outcome first;
  std::thread firstThread([&] { first = initRank(id, 0, 2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Outcome confused = initRank(id, 1, 3);
  EXPECT_EQ(confused.code, ncclInvalidUsage);
  EXPECT_TRUE(contains(confused.error, "says the communicator has 3 ranks"))
      << confused.error;
  Outcome second = initRank(id, 1, 2);
  firstThread.join();
  EXPECT_EQ(first.error, "");
  EXPECT_EQ(second.error, "");
}

// A rank of another HetCCL version that holds the id's secret belongs to
// the job and can never join: every rank fails at once, the ranks already
// there and those still to come, each naming both versions.
TEST_F(BootstrapTest, ARankOfAnotherVersionFailsEveryRankAtOnce) {
  ncclUniqueId id = createUniqueId();
  Outcome first;
  std::thread firstThread([&] { first = initRank(id, 0, 3, 10); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Socket other =
      connectTo(decodeUniqueId(id).root, Deadline::after(5), nullptr, "root");
  RootHello hello;
  hello.secret = decodeUniqueId(id).secret;
  hello.rank = 1;
  hello.nranks = 3;
  hello.listenAddress = SocketAddress::loopback(AF_INET, 1);
  std::vector<uint8_t> bytes = encodeRootHello(hello);
  bytes[4] = 2;  // another bootstrap protocol version
  other.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);
  uint8_t reply[kRootReplyHeaderBytes];
  other.recvAll(reply, sizeof(reply), Deadline::after(5), nullptr);
  EXPECT_EQ(decodeRootReplyHeader(reply), ncclInvalidUsage);
  firstThread.join();
  Outcome late = initRank(id, 2, 3, 10);
  for (const Outcome* rank : {&first, &late}) {
    EXPECT_EQ(rank->code, ncclInvalidUsage);
    EXPECT_TRUE(contains(rank->error,
                         "speaks bootstrap protocol version 2, "
                         "the root version 1"))
        << rank->error;
    EXPECT_LT(rank->seconds, 3.0) << rank->error;
  }
}

// What the root refused meanwhile (here a rank that disagrees on the rank
// count) is part of the timeout message, not only who is missing.
TEST_F(BootstrapTest, TheTimeoutNamesWhatTheRootRefused) {
  ScopedEnv timeout("HETCCL_BOOTSTRAP_TIMEOUT", "1.5");
  ncclUniqueId id = createUniqueId();
  Outcome first;
  std::thread firstThread([&] { first = initRank(id, 0, 2, 1.5); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Outcome confused = initRank(id, 1, 3, 1.5);
  firstThread.join();
  EXPECT_EQ(confused.code, ncclInvalidUsage);
  EXPECT_EQ(first.code, ncclSystemError);
  for (const char* part : {"rank(s) 1 never arrived", "refused meanwhile",
                           "says the communicator has 3 ranks"})
    EXPECT_TRUE(contains(first.error, part)) << first.error;
}

// A root serves one communicator and then stops listening: an id used
// again fails every rank at once, saying why, not after the timeout with
// "connection refused".
TEST_F(BootstrapTest, AnIdUsedAgainFailsAtOnceSayingWhy) {
  ncclUniqueId id = createUniqueId();
  initAllOrFail(id, 2);
  std::vector<Outcome> again = initRanks(id, 2);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(again[r].code, ncclInvalidUsage) << again[r].error;
    EXPECT_TRUE(contains(again[r].error, "no longer listens"))
        << again[r].error;
    EXPECT_TRUE(contains(again[r].error,
                         "ncclUniqueId was most likely used "
                         "already, or by two communicators"))
        << again[r].error;
    EXPECT_LT(again[r].seconds, 2.0);
  }
}

// Two communicators given one id at once: a rank of the second that
// finds its seat taken is refused, saying so, the first forms, and a rank
// of the second that comes later fails at once too.
TEST_F(BootstrapTest, AnIdUsedByTwoCommunicatorsFailsTheSecondAtOnce) {
  ncclUniqueId id = createUniqueId();
  Outcome first0;
  std::thread firstThread([&] { first0 = initRank(id, 0, 2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Outcome second0 = initRank(id, 0, 2);
  Outcome first1 = initRank(id, 1, 2);
  firstThread.join();
  Outcome second1 = initRank(id, 1, 2);
  EXPECT_EQ(first0.error, "");
  EXPECT_EQ(first1.error, "");
  for (const Outcome* second : {&second0, &second1}) {
    EXPECT_EQ(second->code, ncclInvalidUsage) << second->error;
    EXPECT_TRUE(contains(second->error, "by two communicators"))
        << second->error;
    EXPECT_LT(second->seconds, 2.0) << second->error;
  }
}

// The other ranks of a fixed id wait for rank 0 to start the root; if it
// never does, the timeout says who starts it.
TEST_F(BootstrapTest, AFixedIdWithoutRankZeroSaysWhoStartsTheRoot) {
  std::string address = "127.0.0.1:" + std::to_string(freeLoopbackPort());
  ScopedEnv commId("HETCCL_COMM_ID", address.c_str());
  Outcome alone = initRank(createUniqueId(), 1, 2, /*timeout=*/1.0);
  EXPECT_EQ(alone.code, ncclSystemError) << alone.error;
  EXPECT_TRUE(contains(alone.error, "timed out")) << alone.error;
  EXPECT_TRUE(contains(alone.error, "rank 0 starts the bootstrap root"))
      << alone.error;
  EXPECT_GE(alone.seconds, 0.9);
  EXPECT_LT(alone.seconds, 2.5);
}

TEST_F(BootstrapTest, CorruptedIdIsAnInvalidArgument) {
  ncclUniqueId id = createUniqueId();
  ncclUniqueId bad = id;
  bad.internal[40] ^= 1;
  Outcome outcome = initRank(bad, 0, 1);
  EXPECT_EQ(outcome.code, ncclInvalidArgument);
  EXPECT_TRUE(contains(outcome.error, "corrupted or foreign")) << outcome.error;
  EXPECT_TRUE(cancelRoot(id));
}

TEST_F(BootstrapTest, AbortUnblocksRecvPromptly) {
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), 2);
  Bootstrap& b = *ranks[0].bootstrap;
  Clock::time_point aborted;
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    aborted = Clock::now();
    b.abort();
  });
  Error e(ncclSuccess, "");
  int value;
  try {
    b.recv(1, 5, &value, sizeof(value));
  } catch (const Error& error) {
    e = error;
  }
  double latency = secondsSince(aborted);
  aborter.join();
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_TRUE(contains(e.what(), "aborted")) << e.what();
  EXPECT_LT(latency, 0.2);
  // Once aborted, calls fail at once instead of waiting.
  auto start = Clock::now();
  EXPECT_THROW(b.recv(1, 6, &value, sizeof(value)), Error);
  EXPECT_LT(secondsSince(start), 0.2);
}

TEST_F(BootstrapTest, AbortFlagUnblocksInit) {
  ncclUniqueId id = createUniqueId();
  std::atomic<bool> abort{false};
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    abort = true;
  });
  Outcome outcome = initRank(id, 0, 2, 10, &abort);
  aborter.join();
  EXPECT_EQ(outcome.code, ncclSystemError);
  EXPECT_TRUE(contains(outcome.error, "aborted")) << outcome.error;
  EXPECT_LT(outcome.seconds, 0.45);
  EXPECT_TRUE(cancelRoot(id));
}

TEST_F(BootstrapTest, CancelledRootTellsWaitingRanks) {
  ncclUniqueId id = createUniqueId();
  Outcome waiting;
  std::thread rank0([&] { waiting = initRank(id, 0, 2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(cancelRoot(id));
  rank0.join();
  EXPECT_EQ(waiting.code, ncclInvalidUsage);
  EXPECT_TRUE(contains(waiting.error, "cancelled")) << waiting.error;
  EXPECT_LT(waiting.seconds, 2.0);
}

TEST_F(BootstrapTest, PeerThatGoesAwayIsReported) {
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), 2);
  int value = 42;
  ranks[1].bootstrap->send(0, 1, &value, sizeof(value));
  int got = 0;
  ranks[0].bootstrap->recv(1, 1, &got, sizeof(got));
  EXPECT_EQ(got, 42);
  ranks[0].bootstrap->send(1, 1, &value, sizeof(value));
  ranks[1].bootstrap->recv(0, 1, &got, sizeof(got));

  // The watchdog's view: rank 0 holds connections to and from rank 1.
  std::vector<pollfd> fds;
  for (auto [peer, fd] : ranks[0].bootstrap->peerConnectionFds()) {
    EXPECT_EQ(peer, 1);
    fds.push_back({fd, POLLRDHUP, 0});
  }
  EXPECT_EQ(fds.size(), 2u);
  EXPECT_EQ(poll(fds.data(), fds.size(), 0), 0);

  ranks[1].bootstrap.reset();
  EXPECT_EQ(poll(fds.data(), fds.size(), 2000), static_cast<int>(fds.size()));
  auto start = Clock::now();
  try {
    ranks[0].bootstrap->recv(1, 2, &got, sizeof(got));
    ADD_FAILURE() << "recv from a departed rank returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclRemoteError);
    EXPECT_TRUE(contains(e.what(), "rank 1 is gone")) << e.what();
  }
  EXPECT_LT(secondsSince(start), 1.0);
}

TEST_F(BootstrapTest, SendToDepartedRankFailsFast) {
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), 3);
  ranks[2].bootstrap.reset();
  int value = 1;
  auto start = Clock::now();
  try {
    ranks[0].bootstrap->send(2, 4, &value, sizeof(value));
    ADD_FAILURE() << "send to a departed rank returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclRemoteError);
    EXPECT_TRUE(contains(e.what(), "rank 2")) << e.what();
    EXPECT_TRUE(contains(e.what(), "gone")) << e.what();
  }
  EXPECT_LT(secondsSince(start), 1.0);
  // The others are unaffected.
  ranks[0].bootstrap->send(1, 4, &value, sizeof(value));
  int got = 0;
  ranks[1].bootstrap->recv(0, 4, &got, sizeof(got));
  EXPECT_EQ(got, 1);
}

TEST_F(BootstrapTest, SizeMismatchIsAnInternalError) {
  std::vector<Outcome> ranks = initAllOrFail(createUniqueId(), 2);
  int64_t value = 1;
  ranks[0].bootstrap->send(1, 3, &value, sizeof(value));
  int32_t small;
  try {
    ranks[1].bootstrap->recv(0, 3, &small, sizeof(small));
    ADD_FAILURE() << "a size mismatch went unnoticed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclInternalError);
    EXPECT_TRUE(contains(e.what(), "expected 4 bytes")) << e.what();
  }
}

TEST_F(BootstrapTest, RecvTimesOutNamingThePeer) {
  ncclUniqueId id = createUniqueId();
  std::vector<Outcome> ranks(2);
  std::thread t([&] { ranks[1] = initRank(id, 1, 2, 0.5); });
  ranks[0] = initRank(id, 0, 2, 0.5);
  t.join();
  ASSERT_EQ(ranks[0].error, "");
  int value;
  auto start = Clock::now();
  try {
    ranks[0].bootstrap->recv(1, 77, &value, sizeof(value));
    ADD_FAILURE() << "recv returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclSystemError);
    EXPECT_TRUE(contains(e.what(), "timed out after 0.5 s")) << e.what();
    EXPECT_TRUE(contains(e.what(), "tag 77 from rank 1")) << e.what();
  }
  EXPECT_LT(secondsSince(start), 0.8);
}

TEST_F(BootstrapTest, FixedCommIdWorksTwiceInARow) {
  std::string address = "127.0.0.1:" + std::to_string(freeLoopbackPort());
  ScopedEnv commId("HETCCL_COMM_ID", address.c_str());
  const int n = 4;
  for (int round = 0; round < 2; ++round) {
    std::vector<Outcome> ranks(n);
    std::vector<std::thread> threads;
    // Every "process" computes the id itself; rank 0, which hosts the
    // root, comes last, so the others must wait for it.
    for (int r = n - 1; r >= 0; --r) {
      threads.emplace_back([&, r] {
        if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ranks[r] = initRank(createUniqueId(), r, n);
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(ranks[r].error, "") << "round " << round << " rank " << r;
    onEveryRank(ranks, [&](int rank, Bootstrap& b) {
      std::vector<int32_t> slots(n, -1);
      slots[rank] = rank * 7 + round;
      b.allGather(slots.data(), sizeof(int32_t), 1);
      for (int r = 0; r < n; ++r) EXPECT_EQ(slots[r], r * 7 + round);
    });
  }
}

}  // namespace
}  // namespace hetccl
