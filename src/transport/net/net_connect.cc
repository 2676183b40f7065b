#include "transport/net/net_connect.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/net/net_wire.h"
#include "util/error.h"

namespace hetccl {
namespace {

// How long a round of polls that changed nothing waits before the next:
// connections take milliseconds, and the thread shares the cores.
constexpr auto kIdlePoll = std::chrono::microseconds(100);

// A hello in flight on a new connection, in a buffer registered with it.
// The registration goes before the buffer and, since the comm is moved
// out only once the hello is done, before the comm it was made on.
struct Hello {
  uint8_t message[kNetMessageBytes] = {};
  NetRegistration registration;
  void* request = nullptr;
  bool posted = false;
  bool done = false;
};

// One peer's connect, polled with the same handle bytes every time.
struct Outgoing {
  NetListenHandle handle;
  NetComm comm;
  std::unique_ptr<Hello> hello;
};

struct Incoming {
  NetComm comm;
  std::unique_ptr<Hello> hello;
};

class Connector {
 public:
  Connector(const NetContext& context, const NetComm& listen,
            const NetConnectPlan& plan)
      : context_(context),
        library_(context.library()),
        table_(library_.table()),
        listen_(listen),
        plan_(plan) {
    for (const auto& [peer, handle] : plan.peers)
      outgoing_[peer].handle = handle;
  }

  // One round of polls; whether anything changed.
  bool poll() {
    bool moved = false;
    for (auto& [peer, out] : outgoing_) moved = pollOutgoing(out) || moved;
    moved = acceptOne() || moved;
    for (auto it = incoming_.begin(); it != incoming_.end();) {
      moved = pollHello((*it)->comm, (*it)->hello, false) || moved;
      if ((*it)->hello->done) {
        adopt(std::move(**it));
        it = incoming_.erase(it);
      } else {
        ++it;
      }
    }
    return moved;
  }

  bool finished() const {
    if (accepted_.size() != plan_.peers.size()) return false;
    for (const auto& [peer, out] : outgoing_)
      if (!out.hello || !out.hello->done) return false;
    return true;
  }

  std::string missing() const {
    std::string text;
    for (const auto& [peer, out] : outgoing_)
      if (accepted_.count(peer) == 0 || !out.hello || !out.hello->done)
        text += (text.empty() ? "" : ", ") + std::to_string(peer);
    return text;
  }

  std::map<int, NetPeerComms> take() {
    std::map<int, NetPeerComms> comms;
    for (auto& [peer, out] : outgoing_) {
      out.hello.reset();  // its registration before the comm moves
      comms[peer].send = std::move(out.comm);
      comms[peer].receive = std::move(accepted_.at(peer));
    }
    return comms;
  }

 private:
  bool pollOutgoing(Outgoing& out) {
    if (out.comm) return pollHello(out.comm, out.hello, true);
    void* comm = nullptr;
    library_.check(
        table_.connect(context_.get(), plan_.device, out.handle.data(), &comm),
        "connect");
    if (comm == nullptr) return false;
    out.comm = NetComm(context_, NetComm::Kind::kSend, comm);
    out.hello = std::make_unique<Hello>();
    NetHello{plan_.linkSet, static_cast<uint32_t>(plan_.rank)}.encode(
        out.hello->message);
    return true;
  }

  bool acceptOne() {
    void* comm = nullptr;
    library_.check(table_.accept(context_.get(), listen_.get(), &comm),
                   "accept");
    if (comm == nullptr) return false;
    auto in = std::make_unique<Incoming>();
    in->comm = NetComm(context_, NetComm::Kind::kReceive, comm);
    in->hello = std::make_unique<Hello>();
    incoming_.push_back(std::move(in));
    return true;
  }

  // Posts the hello (a send on an outgoing comm, a receive on an incoming
  // one) until the plugin takes it, then tests it.
  bool pollHello(const NetComm& comm, const std::unique_ptr<Hello>& hello,
                 bool sending) {
    if (hello->done) return false;
    if (!hello->posted) {
      if (!hello->registration.handle())
        hello->registration = NetRegistration(context_, comm.get(),
                                              hello->message, kNetMessageBytes);
      const int result =
          sending ? table_.isend(context_.get(), comm.get(), hello->message,
                                 kNetMessageBytes, 0,
                                 hello->registration.handle(), &hello->request)
                  : table_.irecv(context_.get(), comm.get(), hello->message,
                                 kNetMessageBytes, 0,
                                 hello->registration.handle(), &hello->request);
      library_.check(result, sending ? "isend" : "irecv");
      hello->posted = hello->request != nullptr;
      return hello->posted;
    }
    int done = 0;
    library_.check(table_.test(context_.get(), hello->request, &done, nullptr),
                   "test");
    hello->done = done != 0;
    return hello->done;
  }

  void adopt(Incoming in) {
    std::optional<NetHello> hello = NetHello::decode(in.hello->message);
    if (!hello || hello->linkSet != plan_.linkSet)
      fail(ncclSystemError,
           "net transport (rank %d): a connection that is not one of this "
           "communicator's arrived at its listen comm",
           plan_.rank);
    const int from = static_cast<int>(hello->fromRank);
    if (plan_.peers.count(from) == 0 || accepted_.count(from) != 0)
      fail(ncclInternalError,
           "net transport (rank %d): rank %d connected, which is not a peer "
           "it waits for",
           plan_.rank, from);
    in.hello.reset();
    accepted_[from] = std::move(in.comm);
  }

  const NetContext& context_;
  const NetLibrary& library_;
  const hetcclNetModuleTable& table_;
  const NetComm& listen_;
  const NetConnectPlan& plan_;
  std::map<int, Outgoing> outgoing_;
  std::vector<std::unique_ptr<Incoming>> incoming_;
  std::map<int, NetComm> accepted_;
};

}  // namespace

std::map<int, NetPeerComms> connectNetPeers(
    const NetContext& context, const NetComm& listen,
    const NetConnectPlan& plan, const AbortSignal& abort,
    const std::atomic<bool>& stopRequested) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  Connector connector(context, listen, plan);
  while (!connector.finished()) {
    abort.throwIfRaised();
    if (stopRequested.load())
      fail(ncclSystemError,
           "net transport (rank %d): stopped while connecting on device %d",
           plan.rank, plan.device);
    if (plan.timeoutSeconds > 0 &&
        std::chrono::duration<double>(Clock::now() - start).count() >
            plan.timeoutSeconds)
      fail(ncclRemoteError,
           "net transport (rank %d): no connection with rank(s) %s after "
           "%.0f s (%s)",
           plan.rank, connector.missing().c_str(), plan.timeoutSeconds,
           context.library().description().c_str());
    if (!connector.poll()) std::this_thread::sleep_for(kIdlePoll);
  }
  return connector.take();
}

}  // namespace hetccl
