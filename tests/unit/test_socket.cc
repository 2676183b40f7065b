// Sockets: address parsing and printing, interface selection, bulk
// transfers, and that every wait ends (timeouts, abort, EOF).
#include "util/socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "support/elapsed.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"
#include "util/deadline.h"
#include "util/error.h"
#include "util/listener.h"
#include "util/net_interfaces.h"
#include "util/socket_address.h"
#include "util/socket_connect.h"

namespace hetccl {
namespace {

// A connected pair over loopback.
struct SocketPair {
  Socket client;
  Socket server;
};

SocketPair connectedPair() {
  Listener listener(SocketAddress::loopback(AF_INET));
  SocketPair pair;
  pair.client = connectTo(listener.address(), Deadline::after(5), nullptr,
                          "the test listener");
  pair.server = listener.accept(Deadline::after(5), nullptr);
  return pair;
}

TEST(SocketAddress, ParsesAndPrintsIpv4) {
  SocketAddress a = SocketAddress::parse("10.1.2.3:5678");
  EXPECT_EQ(a.family(), AF_INET);
  EXPECT_EQ(a.port(), 5678);
  EXPECT_EQ(a.hostString(), "10.1.2.3");
  EXPECT_EQ(a.toString(), "10.1.2.3:5678");
  EXPECT_FALSE(a.isLoopback());
  EXPECT_TRUE(SocketAddress::parse("127.0.0.5:1").isLoopback());
  EXPECT_TRUE(SocketAddress::parse("169.254.3.4:1").isLinkLocal());
}

TEST(SocketAddress, ParsesAndPrintsIpv6) {
  SocketAddress a = SocketAddress::parse("[::1]:29500");
  EXPECT_EQ(a.family(), AF_INET6);
  EXPECT_EQ(a.port(), 29500);
  EXPECT_EQ(a.toString(), "[::1]:29500");
  EXPECT_TRUE(a.isLoopback());
  SocketAddress b = SocketAddress::parse("fd00::12:80");  // last colon: port
  EXPECT_EQ(b.toString(), "[fd00::12]:80");
  EXPECT_TRUE(SocketAddress::parse("[fe80::1]:2").isLinkLocal());
}

TEST(SocketAddress, ResolvesHostNames) {
  SocketAddress a = SocketAddress::parse("localhost:4242");
  EXPECT_TRUE(a.isLoopback());
  EXPECT_EQ(a.port(), 4242);
  EXPECT_EQ(a.family(), AF_INET);  // IPv4 preferred
}

TEST(SocketAddress, RejectsMalformedText) {
  for (const char* text :
       {"1.2.3.4", "1.2.3.4:", "1.2.3.4:99999", "1.2.3.4:12ab", ":80",
        "[::1:80", "[::1]80", "no-such-host.invalid:80"}) {
    Error e = expectError([&] { SocketAddress::parse(text); });
    EXPECT_EQ(e.code(), ncclInvalidArgument) << text;
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
        << "message should quote the input: " << e.what();
  }
}

TEST(SocketAddress, EncodesAndDecodes) {
  for (const char* text : {"10.1.2.3:5678", "[fd00::abcd:1]:65535"}) {
    SocketAddress a = SocketAddress::parse(text);
    uint8_t bytes[SocketAddress::kEncodedBytes];
    a.encode(bytes);
    SocketAddress b = SocketAddress::decode(bytes);
    EXPECT_EQ(a, b);
    EXPECT_EQ(b.toString(), a.toString());
  }
  uint8_t bytes[SocketAddress::kEncodedBytes] = {};
  EXPECT_TRUE(SocketAddress::decode(bytes).empty());
  bytes[0] = 9;
  EXPECT_EQ(expectError([&] { SocketAddress::decode(bytes); }).code(),
            ncclInvalidArgument);
}

TEST(Interfaces, NcclIfnameSyntax) {
  EXPECT_TRUE(interfaceMatches("eth0", "eth"));
  EXPECT_TRUE(interfaceMatches("ib0", "eth,ib"));
  EXPECT_FALSE(interfaceMatches("lo", "eth,ib"));
  EXPECT_FALSE(interfaceMatches("docker0", "^docker,lo"));
  EXPECT_TRUE(interfaceMatches("eth0", "^docker,lo"));
  EXPECT_TRUE(interfaceMatches("eth0", "=eth0"));
  EXPECT_FALSE(interfaceMatches("eth01", "=eth0"));
  EXPECT_FALSE(interfaceMatches("eth0", "^=eth0"));
  EXPECT_TRUE(interfaceMatches("eth01", "^=eth0"));
}

NetInterface interfaceAt(const std::string& name, const std::string& address,
                         bool loopback = false) {
  const bool v6 = address.find(':') != std::string::npos;
  return {name,
          SocketAddress::parse(v6 ? "[" + address + "]:0" : address + ":0"),
          loopback};
}

TEST(Interfaces, LoopbackAndBridgesStayOnThisHost) {
  for (const char* name : {"docker0", "br-3f2a", "virbr0", "cni0", "veth12"})
    EXPECT_TRUE(staysOnThisHost(interfaceAt(name, "172.17.0.1"))) << name;
  EXPECT_TRUE(staysOnThisHost(interfaceAt("lo", "127.0.0.1", true)));
  for (const char* name : {"eth0", "ens5", "ib0", "bond0", "enp1s0f0"})
    EXPECT_FALSE(staysOnThisHost(interfaceAt(name, "10.0.0.1"))) << name;
}

TEST(Interfaces, UnreachableChoiceNamesTheOthersOncePerName) {
  const NetInterface lo = interfaceAt("lo", "127.0.0.1", true);
  const std::vector<NetInterface> all = {
      lo, interfaceAt("docker0", "172.17.0.1"), interfaceAt("eth0", "10.0.0.2"),
      interfaceAt("eth0", "fd00::2"), interfaceAt("ib0", "10.1.0.2")};
  EXPECT_EQ(unreachableChoiceNote(lo, all),
            "sockets use lo (127.0.0.1), which other hosts cannot reach, "
            "though eth0(10.0.0.2), ib0(10.1.0.2) are up; set "
            "HETCCL_SOCKET_IFNAME to one of those");
  EXPECT_NE(unreachableChoiceNote(all[1], all).find("sockets use docker0"),
            std::string::npos);
}

TEST(Interfaces, NoNoteForAReachableChoiceOrWithoutOthers) {
  const NetInterface lo = interfaceAt("lo", "127.0.0.1", true);
  const NetInterface eth = interfaceAt("eth0", "10.0.0.2");
  EXPECT_EQ(unreachableChoiceNote(eth, {lo, eth}), "");
  EXPECT_EQ(unreachableChoiceNote(lo, {lo, interfaceAt("virbr0", "1.2.3.4")}),
            "");
}

TEST(Interfaces, LoopbackByName) {
  ScopedEnv name("HETCCL_SOCKET_IFNAME", "lo");
  ScopedEnv family("HETCCL_SOCKET_FAMILY", "AF_INET");
  SocketAddress a = chooseLocalAddress();
  EXPECT_TRUE(a.isLoopback()) << a.toString();
  EXPECT_EQ(a.family(), AF_INET);
  EXPECT_EQ(a.port(), 0);
}

TEST(Interfaces, UnmatchedNameIsAnError) {
  ScopedEnv name("HETCCL_SOCKET_IFNAME", "=no-such-interface");
  Error e = expectError([] { chooseLocalAddress(); });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("no-such-interface"), std::string::npos);
}

TEST(Interfaces, DefaultChoiceCanBeListenedOn) {
  ScopedEnv name("HETCCL_SOCKET_IFNAME", nullptr);
  ScopedEnv ncclName("NCCL_SOCKET_IFNAME", nullptr);
  SocketAddress a = chooseLocalAddress();
  ASSERT_FALSE(a.empty());
  Listener listener(a);
  EXPECT_NE(listener.address().port(), 0);
  Socket s = connectTo(listener.address(), Deadline::after(5), nullptr,
                       "the listener");
  EXPECT_TRUE(s.valid());
}

TEST(Socket, SendsAndReceivesLargeBuffers) {
  SocketPair pair = connectedPair();
  const size_t bytes = 48u << 20;
  std::vector<uint32_t> out(bytes / 4);
  std::iota(out.begin(), out.end(), 0x12345u);
  std::vector<uint32_t> in(bytes / 4, 0);
  std::thread sender([&] {
    pair.client.sendAll(out.data(), bytes, Deadline::after(20), nullptr,
                        "a big buffer");
  });
  pair.server.recvAll(in.data(), bytes, Deadline::after(20), nullptr,
                      "a big buffer");
  sender.join();
  EXPECT_TRUE(in == out);
}

TEST(Socket, BothDirectionsAtOnce) {
  // One socket, two threads: one sends while the other receives.
  SocketPair pair = connectedPair();
  const size_t bytes = 8u << 20;
  std::vector<uint8_t> a(bytes, 0xA5), b(bytes, 0x5A), fromA(bytes),
      fromB(bytes);
  std::thread clientSend([&] {
    pair.client.sendAll(a.data(), bytes, Deadline::after(20), nullptr);
  });
  std::thread clientRecv([&] {
    pair.client.recvAll(fromB.data(), bytes, Deadline::after(20), nullptr);
  });
  std::thread serverSend([&] {
    pair.server.sendAll(b.data(), bytes, Deadline::after(20), nullptr);
  });
  pair.server.recvAll(fromA.data(), bytes, Deadline::after(20), nullptr);
  for (auto* t : {&clientSend, &clientRecv, &serverSend}) t->join();
  EXPECT_TRUE(fromA == a);
  EXPECT_TRUE(fromB == b);
}

TEST(Socket, RecvTimesOutWithinBounds) {
  SocketPair pair = connectedPair();
  char byte;
  auto start = Clock::now();
  Error e = expectError([&] {
    pair.server.recvAll(&byte, 1, Deadline::after(0.3), nullptr, "a reply");
  });
  double took = secondsSince(start);
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("timed out after 0.3 s waiting for a "
                                       "reply"),
            std::string::npos)
      << e.what();
  EXPECT_GE(took, 0.29);
  EXPECT_LT(took, 0.6);
}

TEST(Socket, SendTimesOutWhenPeerDoesNotRead) {
  SocketPair pair = connectedPair();
  std::vector<char> big(64u << 20);
  auto start = Clock::now();
  Error e = expectError([&] {
    pair.client.sendAll(big.data(), big.size(), Deadline::after(0.3), nullptr,
                        "a flood");
  });
  double took = secondsSince(start);
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos);
  EXPECT_LT(took, 0.6);
}

// A descriptor limit that leaves `spare` numbers free below it (open
// descriptors may leave gaps, and any number above the limit is refused).
rlim_t limitLeavingFree(int spare) {
  int fd = 0;
  for (int free = 0;; ++fd)
    if (fcntl(fd, F_GETFD) < 0 && ++free == spare) break;
  return static_cast<rlim_t>(fd + 1);
}

// The child's side of the test below: with only three descriptors to
// spare, it accepts for a second holding what it accepted (no throw),
// then lets them go and waits for the connection that says 'L'.
int acceptWithFewDescriptors(Listener& listener) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limitLeavingFree(3);
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
  try {
    std::vector<Socket> held;
    Deadline first = Deadline::after(1.0);
    while (!first.expired())
      if (auto socket = listener.tryAccept())
        held.push_back(std::move(*socket));
    held.clear();
    Deadline second = Deadline::after(5.0);
    while (!second.expired()) {
      auto socket = listener.tryAccept();
      if (!socket) continue;
      char byte = 0;
      try {
        socket->recvAll(&byte, 1, Deadline::after(0.5), nullptr);
      } catch (const Error&) {
        continue;  // an earlier connection, silent
      }
      if (byte == 'L') return 0;
    }
    return 3;
  } catch (const Error&) {
    return 1;
  }
}

// Out of file descriptors, a listener drops the connections it cannot
// hold instead of failing, and accepts again once descriptors are free.
TEST(Listener, SurvivesRunningOutOfFileDescriptors) {
  Listener listener(SocketAddress::loopback(AF_INET, 0));
  pid_t child = fork();
  if (child == 0) _exit(acceptWithFewDescriptors(listener));
  std::vector<Socket> flood;
  for (int i = 0; i < 30; ++i)
    flood.push_back(connectTo(listener.address(), Deadline::after(5), nullptr,
                              "the listener"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Socket late =
      connectTo(listener.address(), Deadline::after(5), nullptr, "listener");
  late.sendAll("L", 1, Deadline::after(5), nullptr);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: the listener threw; 2: no limit set; 3: 'L' never came";
}

TEST(Socket, AcceptTimesOut) {
  Listener listener(SocketAddress::loopback(AF_INET));
  auto start = Clock::now();
  Error e =
      expectError([&] { listener.accept(Deadline::after(0.2), nullptr); });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find(listener.address().toString()),
            std::string::npos);
  EXPECT_LT(secondsSince(start), 0.5);
}

TEST(Socket, ConnectRetriesUntilTimeout) {
  uint16_t port;
  {
    Listener probe(SocketAddress::loopback(AF_INET));
    port = probe.address().port();
  }
  auto start = Clock::now();
  Error e = expectError([&] {
    connectTo(SocketAddress::loopback(AF_INET, port), Deadline::after(0.4),
              nullptr, "the missing root");
  });
  double took = secondsSince(start);
  EXPECT_EQ(e.code(), ncclSystemError);
  std::string message = e.what();
  EXPECT_NE(message.find("timed out after 0.4 s"), std::string::npos)
      << message;
  EXPECT_NE(message.find("the missing root"), std::string::npos);
  EXPECT_NE(message.find("refused"), std::string::npos);
  EXPECT_GE(took, 0.39);
  EXPECT_LT(took, 0.7);
}

TEST(Socket, RefusalIsFinalWhenTheListenerShouldBeUp) {
  uint16_t port;
  {
    Listener probe(SocketAddress::loopback(AF_INET));
    port = probe.address().port();
  }
  auto start = Clock::now();
  Error e = expectError([&] {
    connectTo(SocketAddress::loopback(AF_INET, port), Deadline::after(5),
              nullptr, "rank 3", ConnectMode::kListenerIsUp);
  });
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_NE(std::string(e.what()).find("rank 3"), std::string::npos);
  EXPECT_LT(secondsSince(start), 0.5);
}

TEST(Socket, ConnectWaitsForLateListener) {
  SocketAddress address;
  {
    Listener probe(SocketAddress::loopback(AF_INET));
    address = probe.address();
  }
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Listener listener(address);
    Socket s = listener.accept(Deadline::after(5), nullptr);
    uint32_t value = 0xC0FFEE;
    s.sendAll(&value, sizeof(value), Deadline::after(5), nullptr);
  });
  Socket s = connectTo(address, Deadline::after(5), nullptr, "the late one");
  uint32_t value = 0;
  s.recvAll(&value, sizeof(value), Deadline::after(5), nullptr);
  late.join();
  EXPECT_EQ(value, 0xC0FFEEu);
}

TEST(Socket, AbortInterruptsBlockedRecvQuickly) {
  SocketPair pair = connectedPair();
  std::atomic<bool> abort{false};
  Clock::time_point raised;
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    raised = Clock::now();
    abort.store(true);
  });
  char byte;
  Error e = expectError([&] {
    pair.server.recvAll(&byte, 1, Deadline::never(), &abort, "a message");
  });
  Clock::time_point ended = Clock::now();
  aborter.join();
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("aborted"), std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(ended - raised).count(), 0.2);
}

TEST(Socket, EitherOfTwoFlagsAborts) {
  std::atomic<bool> first{false}, second{true};
  AbortFlags flags(&first, &second);
  EXPECT_TRUE(flags.raised());
  second = false;
  EXPECT_FALSE(flags.raised());
  EXPECT_FALSE(AbortFlags().raised());
}

TEST(Socket, EofIsReported) {
  SocketPair pair = connectedPair();
  pair.client.sendAll("ab", 2, Deadline::after(5), nullptr);
  pair.client.close();
  char buffer[4];
  Error e = expectError([&] {
    pair.server.recvAll(buffer, 4, Deadline::after(5), nullptr, "a header");
  });
  EXPECT_EQ(e.code(), ncclRemoteError);
  std::string message = e.what();
  EXPECT_NE(message.find("peer closed the connection"), std::string::npos)
      << message;
  EXPECT_NE(message.find("got 2 of 4 bytes"), std::string::npos) << message;
}

TEST(Socket, SendToClosedPeerFails) {
  SocketPair pair = connectedPair();
  pair.server.close();
  std::vector<char> chunk(1 << 16);
  Error e = expectError([&] {
    for (int i = 0; i < 1000; ++i)
      pair.client.sendAll(chunk.data(), chunk.size(), Deadline::after(5),
                          nullptr);
  });
  EXPECT_EQ(e.code(), ncclRemoteError) << e.what();
}

TEST(Socket, NamedPeerAppearsInMessages) {
  SocketPair pair = connectedPair();
  pair.server.setPeerName("rank 7 at somewhere");
  char byte;
  Error e = expectError([&] {
    pair.server.recvAll(&byte, 1, Deadline::after(0.05), nullptr, "a hello");
  });
  EXPECT_NE(std::string(e.what()).find("a hello from rank 7 at somewhere"),
            std::string::npos)
      << e.what();
}

TEST(Deadline, NeverAndEarliest) {
  EXPECT_TRUE(Deadline::after(0).isNever());
  EXPECT_TRUE(Deadline::after(-1).isNever());
  EXPECT_FALSE(Deadline::never().expired());
  Deadline soon = Deadline::after(0.01);
  Deadline later = Deadline::after(100);
  EXPECT_EQ(later.earliest(soon).seconds(), 0.01);
  EXPECT_EQ(Deadline::never().earliest(later).seconds(), 100);
  EXPECT_LE(soon.pollSliceMs(), 10);
  EXPECT_EQ(later.pollSliceMs(), kPollSliceMs);
  std::this_thread::sleep_for(std::chrono::milliseconds(15));
  EXPECT_TRUE(soon.expired());
  EXPECT_EQ(soon.pollSliceMs(), 0);
}

}  // namespace
}  // namespace hetccl
