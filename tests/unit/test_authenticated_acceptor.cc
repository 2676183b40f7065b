// The acceptor every listener of HetCCL shares: a good hello reaches the
// caller, whatever the pieces it comes in; a wrong secret, a stranger's
// bytes, a caller's refusal, a connection that stays silent past the
// deadline and one more than the cap on waiting connections are dropped,
// each with a warning.
#include "util/authenticated_acceptor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support/elapsed.h"
#include "util/error.h"
#include "util/socket_connect.h"
#include "util/wire.h"

namespace hetccl {
namespace {

// A test hello: magic, secret, then how many more bytes follow it.
constexpr uint32_t kMagic = 0x54504341;  // "ACPT"
constexpr size_t kSecretOffset = 4;
constexpr size_t kFixedBytes = 4 + 16 + 4;
// A hello that announces this many more bytes is refused by the caller.
constexpr uint32_t kRefusedExtra = 0xffff;

bool hasMagic(const uint8_t* bytes) { return loadLe32(bytes) == kMagic; }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

HelloFormat testFormat() {
  return HelloFormat{"a test hello", sizeof(kMagic), hasMagic,
                     kFixedBytes,    kSecretOffset,  "wrong test secret"};
}

std::vector<uint8_t> helloBytes(const Secret& secret, uint32_t extra) {
  std::vector<uint8_t> bytes(kFixedBytes + (extra == kRefusedExtra ? 0 : extra),
                             0xab);
  storeLe32(bytes.data(), kMagic);
  std::memcpy(bytes.data() + kSecretOffset, secret.data(), secret.size());
  storeLe32(bytes.data() + kSecretOffset + secret.size(), extra);
  return bytes;
}

// True once the acceptor's end of `socket` is closed.
bool closedByPeer(Socket& socket) {
  uint8_t byte;
  try {
    socket.recvSome(&byte, 1, "a probe");
  } catch (const Error&) {
    return true;
  }
  return false;
}

class AcceptorTest : public ::testing::Test {
 protected:
  // Polls and progresses the acceptor until `done` or `seconds` passed;
  // returns whether `done`.
  bool pumpUntil(const std::function<bool()>& done, double seconds) {
    const Deadline deadline = Deadline::after(seconds);
    while (!done()) {
      if (deadline.expired()) return false;
      std::vector<pollfd> fds;
      acceptor_.appendPollFds(&fds);
      pollSlice(fds, deadline.earliest(Deadline::after(0.01)));
      acceptor_.progress(fds);
    }
    return true;
  }

  Socket connect() {
    return connectTo(address_, Deadline::after(5), nullptr, "the acceptor");
  }

  void send(Socket& socket, const std::vector<uint8_t>& bytes) {
    socket.sendAll(bytes.data(), bytes.size(), Deadline::after(5), nullptr);
  }

  HelloVerdict onHello(const std::vector<uint8_t>& hello, Socket& socket) {
    const uint32_t extra = loadLe32(hello.data() + kFixedBytes - 4);
    if (extra == kRefusedExtra)
      return HelloVerdict::refuse(ncclInvalidUsage, "an extra it refuses");
    if (hello.size() < kFixedBytes + extra)
      return HelloVerdict::readUntil(kFixedBytes + extra);
    delivered_.push_back(hello);
    taken_.push_back(std::move(socket));
    return HelloVerdict::taken();
  }

  const Secret secret_ = randomSecret();
  Listener listener_{SocketAddress::loopback(AF_INET)};  // the acceptor's
  const SocketAddress address_ = listener_.address();
  std::vector<std::vector<uint8_t>> delivered_;
  std::vector<Socket> taken_;
  std::vector<Error> answers_;
  AuthenticatedAcceptor acceptor_{
      std::move(listener_),
      secret_,
      testFormat(),
      "test acceptor",
      kLogNet,
      [this](const std::vector<uint8_t>& hello, Socket& socket) {
        return onHello(hello, socket);
      },
      [this](Socket&, const Error& refusal) { answers_.push_back(refusal); }};
};

TEST_F(AcceptorTest, AGoodHelloInPiecesReachesTheCaller) {
  Socket client = connect();
  const std::vector<uint8_t> hello = helloBytes(secret_, 5);
  for (size_t at = 0; at < hello.size(); at += 3) {
    send(client,
         {hello.begin() + at, hello.begin() + std::min(at + 3, hello.size())});
    pumpUntil([] { return false; }, 0.02);
  }
  ASSERT_TRUE(pumpUntil([&] { return !delivered_.empty(); }, 2));
  EXPECT_EQ(delivered_[0], hello);
  EXPECT_EQ(acceptor_.pendingCount(), 0u);
  EXPECT_TRUE(answers_.empty());
  // The caller holds the connection now.
  taken_[0].sendAll("k", 1, Deadline::after(5), nullptr);
  char byte = 0;
  client.recvAll(&byte, 1, Deadline::after(5), nullptr);
  EXPECT_EQ(byte, 'k');
}

TEST_F(AcceptorTest, AWrongSecretIsRefusedAnsweredAndLogged) {
  Secret other = secret_;
  other[5] ^= 1;
  Socket client = connect();
  ::testing::internal::CaptureStderr();
  send(client, helloBytes(other, 0));
  EXPECT_TRUE(pumpUntil([&] { return closedByPeer(client); }, 2));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(delivered_.empty());
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0].code(), ncclInvalidArgument);
  EXPECT_STREQ(answers_[0].what(), "wrong test secret");
  EXPECT_TRUE(
      contains(log, "HETCCL WARN test acceptor: dropped connection from "))
      << log;
  EXPECT_TRUE(contains(log, ": wrong test secret (1 dropped so far)")) << log;
}

TEST_F(AcceptorTest, TheCallersRefusalIsAnswered) {
  Socket client = connect();
  send(client, helloBytes(secret_, kRefusedExtra));
  EXPECT_TRUE(pumpUntil([&] { return closedByPeer(client); }, 2));
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0].code(), ncclInvalidUsage);
  EXPECT_STREQ(answers_[0].what(), "an extra it refuses");
}

TEST_F(AcceptorTest, AStrangerOfAnotherProtocolGoesAtOnce) {
  Socket client = connect();
  ::testing::internal::CaptureStderr();
  send(client, {'G', 'E', 'T', ' ', '/'});
  const auto start = Clock::now();
  EXPECT_TRUE(pumpUntil([&] { return closedByPeer(client); }, 2));
  EXPECT_LT(secondsSince(start), 0.5);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(log, "sent bytes that are not a test hello")) << log;
  EXPECT_TRUE(answers_.empty());  // it did not speak the protocol
}

// One connection more than may wait for a hello: the oldest goes at once
// (a real rank says hello at once), with a warning; the others stay.
TEST_F(AcceptorTest, OneConnectionBeyondTheCapDropsTheOldest) {
  std::vector<Socket> silent;
  for (size_t i = 0; i < kMaxPendingConnections + 1; ++i)
    silent.push_back(connect());
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(pumpUntil([&] { return closedByPeer(silent.front()); }, 2));
  pumpUntil([] { return false; }, 0.1);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(acceptor_.pendingCount(), kMaxPendingConnections);
  EXPECT_FALSE(closedByPeer(silent.back()));
  EXPECT_TRUE(
      contains(log, "HETCCL WARN test acceptor: dropped connection from"))
      << log;
  EXPECT_TRUE(contains(log, "more than " +
                                std::to_string(kMaxPendingConnections) +
                                " connections waited for their hello at once"))
      << log;
}

// A connection that sends nothing, and one that sends part of a hello,
// go at the hello deadline, not before, each with a warning.
TEST_F(AcceptorTest, SilentConnectionsGoAtTheDeadline) {
  Socket silent = connect();
  Socket partial = connect();
  std::vector<uint8_t> hello = helloBytes(secret_, 0);
  send(partial, {hello.begin(), hello.begin() + 10});
  ::testing::internal::CaptureStderr();
  const auto start = Clock::now();
  EXPECT_TRUE(
      pumpUntil([&] { return closedByPeer(silent) && closedByPeer(partial); },
                kHelloTimeoutSeconds + 2));
  const double took = secondsSince(start);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_GE(took, kHelloTimeoutSeconds - 0.2);
  EXPECT_LT(took, kHelloTimeoutSeconds + 1);
  EXPECT_EQ(acceptor_.pendingCount(), 0u);
  EXPECT_TRUE(delivered_.empty());
  for (const char* got : {"(got 0 bytes)", "(got 10 bytes)"})
    EXPECT_TRUE(
        contains(log, "no complete hello within 5 s " + std::string(got)))
        << log;
}

TEST_F(AcceptorTest, CloseStopsListeningAndDropsWhatWaits) {
  Socket waiting = connect();
  pumpUntil([&] { return acceptor_.pendingCount() == 1; }, 2);
  acceptor_.close();
  EXPECT_TRUE(closedByPeer(waiting));
  EXPECT_THROW(connectTo(address_, Deadline::after(1), nullptr, "the acceptor",
                         ConnectMode::kListenerIsUp),
               Error);
}

}  // namespace
}  // namespace hetccl
