#include "transport/tcp/tcp_connect.h"

#include <sys/socket.h>

#include <cstdio>
#include <memory>
#include <string>

#include "transport/tcp/tcp_wire.h"
#include "util/error.h"
#include "util/log.h"

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

// Accepts and vets connections until every lower peer's sockets arrived.
class HelloCollector {
 public:
  HelloCollector(const TcpConnectPlan& plan, Listener& listener,
                 TcpConnections* out)
      : plan_(plan), listener_(listener), out_(out) {
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
      waitForActivity(deadline);
      acceptPending();
      readHellos();
    }
  }

 private:
  struct Pending {
    Socket socket;
    uint8_t wire[TcpHello::kEncodedBytes] = {};
    size_t received = 0;
  };

  void waitForActivity(const Deadline& deadline) {
    std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
    for (const auto& p : pending_) fds.push_back({p->socket.fd(), POLLIN, 0});
    pollSlice(fds, deadline);
  }

  void acceptPending() {
    while (auto socket = listener_.tryAccept()) {
      auto pending = std::make_unique<Pending>();
      pending->socket = std::move(*socket);
      pending_.push_back(std::move(pending));
    }
  }

  void readHellos() {
    for (size_t i = 0; i < pending_.size();) {
      if (readHello(*pending_[i])) {
        pending_.erase(pending_.begin() + i);
      } else {
        ++i;
      }
    }
  }

  // True once the connection was placed or rejected.
  bool readHello(Pending& p) {
    try {
      p.received +=
          p.socket.recvSome(p.wire + p.received, sizeof(p.wire) - p.received,
                            "tcp transport hello");
    } catch (const Error& e) {
      reject(p, e.what());
      return true;
    }
    if (p.received < sizeof(p.wire)) return false;
    std::string problem = place(p);
    if (!problem.empty()) reject(p, problem);
    return true;
  }

  // Takes the connection if its hello is one we wait for; otherwise says
  // why not.
  std::string place(Pending& p) {
    std::optional<TcpHello> hello = TcpHello::decode(p.wire);
    if (!hello) return "not a HetCCL tcp transport hello";
    if (!secretsEqual(hello->secret, plan_.secret))
      return "wrong communicator secret";
    if (hello->toRank != static_cast<uint32_t>(plan_.rank))
      return format("hello is addressed to rank %u", hello->toRank);
    auto it = out_->find(static_cast<int>(hello->fromRank));
    if (it == out_->end() ||
        hello->fromRank >= static_cast<uint32_t>(plan_.rank))
      return format("rank %u is not a peer of this rank's tcp links",
                    hello->fromRank);
    if (hello->socketsPerLink != static_cast<uint32_t>(plan_.socketsPerLink) ||
        hello->socketIndex >= hello->socketsPerLink)
      return format("socket %u of %u does not fit this link's %d sockets",
                    hello->socketIndex, hello->socketsPerLink,
                    plan_.socketsPerLink);
    Socket& slot = it->second[hello->socketIndex];
    if (slot.valid())
      return format("duplicate socket %u from rank %u", hello->socketIndex,
                    hello->fromRank);
    int from = static_cast<int>(hello->fromRank);
    p.socket.setPeerName(rankName(from, plan_.addresses[from]));
    setTcpBufferSizes(p.socket.fd(), plan_.socketBufferBytes);
    slot = std::move(p.socket);
    --missing_;
    return "";
  }

  void reject(Pending& p, const std::string& why) {
    LOG_WARN(
        kLogNet, "tcp transport (rank %d): rejected a connection from %s: %s",
        plan_.rank, p.socket.peerAddress().toString().c_str(), why.c_str());
    p.socket.close();
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
  Listener& listener_;
  TcpConnections* out_;
  int missing_ = 0;
  std::vector<std::unique_ptr<Pending>> pending_;
};

}  // namespace

void setTcpBufferSizes(int fd, int bytes) {
  if (bytes <= 0) return;
  setBufferOption(fd, SO_SNDBUF, bytes, "net.core.wmem_max");
  setBufferOption(fd, SO_RCVBUF, bytes, "net.core.rmem_max");
}

TcpConnections connectTcpPeers(const TcpConnectPlan& plan, Listener& listener,
                               const AbortFlags& abort) {
  Deadline deadline = Deadline::after(plan.timeoutSeconds);
  TcpConnections connections;
  // Connecting first cannot deadlock: the kernel completes connections on
  // the peers' listen backlog before anyone calls accept().
  for (int peer : plan.peers)
    if (peer > plan.rank)
      connectToHigherPeer(plan, peer, deadline, abort, &connections[peer]);
  HelloCollector(plan, listener, &connections).run(deadline, abort);
  return connections;
}

}  // namespace hetccl
