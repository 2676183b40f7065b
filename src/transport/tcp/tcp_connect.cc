#include "transport/tcp/tcp_connect.h"

#include <sys/socket.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transport/tcp/tcp_wire.h"
#include "util/authenticated_acceptor.h"
#include "util/error.h"
#include "util/log.h"
#include "util/socket_connect.h"

namespace hetccl {
namespace {

// The kernel's cap on SO_SNDBUF / SO_RCVBUF requests (0 if unknown).
long readSysctl(const char* path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path, "r"),
                                             &std::fclose);
  long value = 0;
  if (!file || std::fscanf(file.get(), "%ld", &value) != 1) return 0;
  return value;
}

void setBufferOption(int fd, int option, int bytes, const char* capPath) {
  static const long sendCap = readSysctl("/proc/sys/net/core/wmem_max");
  static const long recvCap = readSysctl("/proc/sys/net/core/rmem_max");
  long cap = option == SO_SNDBUF ? sendCap : recvCap;
  if (cap < bytes) {
    LOG_TRACE(kLogNet,
              "%s is %ld, below the %d bytes asked for: keeping "
              "the kernel's buffer autotuning",
              capPath, cap, bytes);
    return;
  }
  if (setsockopt(fd, SOL_SOCKET, option, &bytes, sizeof(bytes)) < 0)
    LOG_TRACE(kLogNet, "setsockopt(%s, %d) failed; keeping the default",
              option == SO_SNDBUF ? "SO_SNDBUF" : "SO_RCVBUF", bytes);
}

std::string rankName(int rank, const SocketAddress& address) {
  return format("rank %d at %s", rank, address.toString().c_str());
}

void connectToHigherPeer(const TcpConnectPlan& plan, int peer,
                         const Deadline& deadline, const AbortFlags& abort,
                         std::vector<Socket>* sockets) {
  std::string name = rankName(peer, plan.addresses[peer]);
  for (int index = 0; index < plan.socketsPerLink; ++index) {
    Socket socket = connectTo(plan.addresses[peer], deadline, abort,
                              name.c_str(), ConnectMode::kListenerIsUp);
    socket.setPeerName(name);
    setTcpBufferSizes(socket.fd(), plan.socketBufferBytes);
    TcpHello hello;
    hello.secret = plan.secret;
    hello.fromRank = static_cast<uint32_t>(plan.rank);
    hello.toRank = static_cast<uint32_t>(peer);
    hello.socketIndex = static_cast<uint32_t>(index);
    hello.socketsPerLink = static_cast<uint32_t>(plan.socketsPerLink);
    uint8_t wire[TcpHello::kEncodedBytes];
    hello.encode(wire);
    socket.sendAll(wire, sizeof(wire), deadline, abort, "tcp transport hello");
    sockets->push_back(std::move(socket));
  }
}

// Accepts connections (AuthenticatedAcceptor) until every lower peer's
// sockets arrived.
class LowerPeerSockets {
 public:
  LowerPeerSockets(const TcpConnectPlan& plan, Listener listener,
                   TcpConnections* out)
      : plan_(plan),
        out_(out),
        acceptor_(std::move(listener), plan.secret, TcpHello::format(),
                  format("tcp transport (rank %d)", plan.rank), kLogNet,
                  [this](const std::vector<uint8_t>& hello, Socket& socket) {
                    return place(hello, socket);
                  }) {
    for (int peer : plan.peers) {
      if (peer > plan.rank) continue;
      (*out_)[peer].resize(plan.socketsPerLink);
      missing_ += plan.socketsPerLink;
    }
  }

  void run(const Deadline& deadline, const AbortFlags& abort) {
    while (missing_ > 0) {
      if (abort.raised() || deadline.expired())
        checkWait(deadline, abort, describeMissing());
      std::vector<pollfd> fds;
      acceptor_.appendPollFds(&fds);
      pollSlice(fds, deadline);
      acceptor_.progress(fds);
    }
  }

 private:
  // Takes the connection if its hello is one we wait for.
  HelloVerdict place(const std::vector<uint8_t>& bytes, Socket& socket) {
    const TcpHello hello = *TcpHello::decode(bytes.data());  // magic checked
    std::string problem = whyNot(hello);
    if (!problem.empty())
      return HelloVerdict::refuse(ncclInvalidUsage, problem);
    const int from = static_cast<int>(hello.fromRank);
    socket.setPeerName(rankName(from, plan_.addresses[from]));
    setTcpBufferSizes(socket.fd(), plan_.socketBufferBytes);
    (*out_)[from][hello.socketIndex] = std::move(socket);
    --missing_;
    return HelloVerdict::taken();
  }

  // Why a hello with the secret is not one of the sockets still missing,
  // or "".
  std::string whyNot(const TcpHello& hello) const {
    if (hello.toRank != static_cast<uint32_t>(plan_.rank))
      return format("hello is addressed to rank %u", hello.toRank);
    auto it = out_->find(static_cast<int>(hello.fromRank));
    if (it == out_->end() ||
        hello.fromRank >= static_cast<uint32_t>(plan_.rank))
      return format("rank %u is not a peer of this rank's tcp links",
                    hello.fromRank);
    if (hello.socketsPerLink != static_cast<uint32_t>(plan_.socketsPerLink) ||
        hello.socketIndex >= hello.socketsPerLink)
      return format("socket %u of %u does not fit this link's %d sockets",
                    hello.socketIndex, hello.socketsPerLink,
                    plan_.socketsPerLink);
    if (it->second[hello.socketIndex].valid())
      return format("duplicate socket %u from rank %u", hello.socketIndex,
                    hello.fromRank);
    return "";
  }

  std::string describeMissing() const {
    std::string list;
    for (const auto& [peer, sockets] : *out_) {
      if (peer > plan_.rank) continue;
      int arrived = 0;
      for (const auto& s : sockets) arrived += s.valid() ? 1 : 0;
      if (arrived == plan_.socketsPerLink) continue;
      if (!list.empty()) list += ", ";
      list += format("rank %d (%d of %d sockets)", peer, arrived,
                     plan_.socketsPerLink);
    }
    return format("tcp transport connections to rank %d from %s", plan_.rank,
                  list.c_str());
  }

  const TcpConnectPlan& plan_;
  TcpConnections* out_;
  int missing_ = 0;
  AuthenticatedAcceptor acceptor_;
};

}  // namespace

void setTcpBufferSizes(int fd, int bytes) {
  if (bytes <= 0) return;
  setBufferOption(fd, SO_SNDBUF, bytes, "net.core.wmem_max");
  setBufferOption(fd, SO_RCVBUF, bytes, "net.core.rmem_max");
}

TcpConnections connectTcpPeers(const TcpConnectPlan& plan, Listener listener,
                               const AbortFlags& abort) {
  Deadline deadline = Deadline::after(plan.timeoutSeconds);
  TcpConnections connections;
  // Connecting first cannot deadlock: the kernel completes connections on
  // the peers' listen backlog before anyone calls accept().
  for (int peer : plan.peers)
    if (peer > plan.rank)
      connectToHigherPeer(plan, peer, deadline, abort, &connections[peer]);
  LowerPeerSockets(plan, std::move(listener), &connections)
      .run(deadline, abort);
  return connections;
}

}  // namespace hetccl
