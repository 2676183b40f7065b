#include "bootstrap/root_service.h"

#include <poll.h>

#include <algorithm>
#include <chrono>

#include "util/error.h"
#include "util/log.h"
#include "util/rank_list.h"

namespace hetccl {
namespace {

// Replies that go to ranks which may already be gone get little patience.
constexpr double kReplySeconds = 2.0;

}  // namespace

RootService::RootService(Listener listener, const Secret& secret,
                         const BootstrapSettings& settings,
                         std::function<void()> onStopListening)
    : address_(listener.address()),
      timeoutSeconds_(settings.timeoutSeconds),
      stallWarnSeconds_(settings.stallWarnSeconds),
      nextReportSeconds_(settings.stallWarnSeconds),
      onStopListening_(std::move(onStopListening)),
      name_("bootstrap root at " + address_.toString()),
      acceptor_(
          std::move(listener), secret, rootHelloFormat(), name_, kLogBootstrap,
          [this](const std::vector<uint8_t>& hello, Socket& socket) {
            return onHello(hello, socket);
          },
          [this](Socket& socket, const Error& refusal) {
            answer(socket, refusal);
          }) {}

RootService::~RootService() { stopListening(); }

void RootService::stopListening() {
  acceptor_.close();
  if (onStopListening_) {
    auto callback = std::move(onStopListening_);
    onStopListening_ = nullptr;
    callback();
  }
}

void RootService::run() {
  const auto start = std::chrono::steady_clock::now();
  Deadline deadline = Deadline::after(timeoutSeconds_);
  LOG_INFO(kLogBootstrap, "%s: waiting for the ranks of one communicator",
           name_.c_str());
  while (true) {
    if (nranks_ > 0 && arrivals_.size() == static_cast<size_t>(nranks_)) {
      sendTables();
      return;
    }
    if (cancelled_) {
      failArrived(ncclInvalidUsage,
                  "the bootstrap root was cancelled: this communicator is "
                  "formed with another ncclUniqueId");
      return;
    }
    if (deadline.expired() && fatal_) return;  // everyone was told
    if (deadline.expired()) {
      std::string message =
          nranks_ == 0 ? format("no rank arrived within %g s", timeoutSeconds_)
                       : format(
                             "timed out after %g s: %zu of %d rank(s) arrived; "
                             "rank(s) %s never arrived%s",
                             timeoutSeconds_, arrivals_.size(), nranks_,
                             missingRanks().c_str(), refusalsText().c_str());
      LOG_WARN(kLogBootstrap, "%s: %s", name_.c_str(), message.c_str());
      failArrived(ncclSystemError, message);
      return;
    }
    pollOnce(deadline);
    reportWait(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
}

void RootService::reportWait(double waited) {
  if (stallWarnSeconds_ <= 0 || waited < nextReportSeconds_ || fatal_) return;
  nextReportSeconds_ = 2 * waited;
  LOG_WARN(kLogBootstrap,
           "%s: has waited %.0f s for the ranks of one "
           "communicator: %s",
           name_.c_str(), waited, arrivalsText().c_str());
}

std::string RootService::arrivalsText() const {
  if (nranks_ == 0) return "no rank has arrived yet";
  constexpr size_t kNamed = 8;  // a large job's list would flood the line
  std::string arrived;
  size_t named = 0;
  for (const auto& entry : arrivals_) {
    if (named == kNamed) {
      arrived += ", ...";
      break;
    }
    arrived += (named++ > 0 ? ", " : "") + entry.second.socket.peerName();
  }
  return format("%zu of %d rank(s) arrived (%s); not yet: rank(s) %s",
                arrivals_.size(), nranks_, arrived.c_str(),
                missingRanks().c_str());
}

void RootService::pollOnce(const Deadline& deadline) {
  std::vector<pollfd> fds;
  std::vector<int> watched;
  for (const auto& [rank, arrival] : arrivals_) {
    fds.push_back({arrival.socket.fd(), POLLIN, 0});
    watched.push_back(rank);
  }
  acceptor_.appendPollFds(&fds);
  pollSlice(fds, deadline);
  for (size_t i = 0; i < watched.size(); ++i)
    if (fds[i].revents != 0) watchArrival(watched[i]);
  acceptor_.progress(fds);
}

HelloVerdict RootService::onHello(const std::vector<uint8_t>& hello,
                                  Socket& socket) {
  if (hello.size() == kRootHelloPrefixBytes) return onPrefix(hello, socket);
  if (hello.size() == kRootHelloBytes) return onHelloHeader(hello, socket);
  return onJoin(hello, socket);
}

// The acceptor checked the secret. A rank with it but of another protocol
// version belongs to this job and can never join it, so the whole
// communicator fails now rather than at the timeout.
HelloVerdict RootService::onPrefix(const std::vector<uint8_t>& hello,
                                   Socket& socket) {
  if (fatal_) return HelloVerdict::refuse(fatal_->code(), fatal_->what());
  RootHelloPrefix prefix = decodeRootHelloPrefix(hello.data());
  if (prefix.version == kBootstrapProtocolVersion)
    return HelloVerdict::readUntil(kRootHelloBytes);
  std::string message = format(
      "a rank of this communicator (from %s) speaks bootstrap "
      "protocol version %u, the root version %u: every node needs "
      "the same HetCCL release",
      socket.peerName().c_str(), prefix.version, kBootstrapProtocolVersion);
  failCommunicator(ncclInvalidUsage, message);
  return HelloVerdict::refuse(ncclInvalidUsage, message);
}

void RootService::failCommunicator(ncclResult_t code,
                                   const std::string& message) {
  LOG_WARN(kLogBootstrap, "%s: the communicator cannot form: %s", name_.c_str(),
           message.c_str());
  fatal_ = Error(code, message);
  tellArrived(code, message);
  arrivals_.clear();
}

HelloVerdict RootService::onHelloHeader(const std::vector<uint8_t>& bytes,
                                        Socket& socket) {
  RootHello hello;
  try {
    hello = decodeRootHello(bytes.data());
  } catch (const Error& e) {
    return HelloVerdict::refuse(ncclInvalidArgument, e.what());
  }
  if (hello.request == RootRequest::kCancel) return onCancel(socket);
  if (hello.peerInfoBytes > kMaxPeerInfoBytes)
    return HelloVerdict::refuse(
        ncclInvalidArgument,
        format("peer info of %u bytes is larger than the limit of %u",
               hello.peerInfoBytes, kMaxPeerInfoBytes));
  // Refused before the rest is read, and before the claim fixes the rank
  // count that the real ranks must match.
  std::string bad = badJoin(hello);
  if (!bad.empty()) return HelloVerdict::refuse(ncclInvalidArgument, bad);
  if (hello.peerInfoBytes == 0) return onJoin(bytes, socket);
  return HelloVerdict::readUntil(kRootHelloBytes + hello.peerInfoBytes);
}

std::string RootService::badJoin(const RootHello& hello) {
  if (hello.nranks > kMaxRanks)
    return format("a communicator of %d ranks: more than the maximum of %d",
                  hello.nranks, kMaxRanks);
  if (hello.nranks <= 0 || hello.rank < 0 || hello.rank >= hello.nranks)
    return format("rank %d of %d is out of range", hello.rank, hello.nranks);
  if (hello.listenAddress.empty())
    return format("rank %d sent no listen address", hello.rank);
  return "";
}

HelloVerdict RootService::onJoin(const std::vector<uint8_t>& bytes,
                                 Socket& socket) {
  const RootHello hello = decodeRootHello(bytes.data());
  if (nranks_ == 0) {
    nranks_ = hello.nranks;
    firstRank_ = hello.rank;
    peerInfoBytes_ = hello.peerInfoBytes;
  } else if (hello.nranks != nranks_) {
    return HelloVerdict::refuse(
        ncclInvalidUsage,
        format("rank %d says the communicator has %d ranks, "
               "but rank %d said %d",
               hello.rank, hello.nranks, firstRank_, nranks_));
  } else if (hello.peerInfoBytes != peerInfoBytes_) {
    // Ranks of different builds: they can never form this communicator.
    std::string message = format(
        "rank %d sent %u bytes of peer info, rank %d sent %u: the "
        "ranks run different HetCCL builds; every node needs the "
        "same HetCCL release",
        hello.rank, hello.peerInfoBytes, firstRank_, peerInfoBytes_);
    failCommunicator(ncclInvalidUsage, message);
    return HelloVerdict::refuse(ncclInvalidUsage, message);
  }
  return seat(hello, bytes, socket);
}

HelloVerdict RootService::seat(const RootHello& hello,
                               const std::vector<uint8_t>& bytes,
                               Socket& socket) {
  const std::string from = socket.peerName();
  auto taken = arrivals_.find(hello.rank);
  if (taken != arrivals_.end())
    return HelloVerdict::refuse(
        ncclInvalidUsage,
        format("rank %d joined twice: first from %s, again from %s "
               "(is one ncclUniqueId used by two communicators?)",
               hello.rank, taken->second.socket.peerName().c_str(),
               from.c_str()));
  Arrival arrival;
  arrival.listenAddress = hello.listenAddress;
  arrival.peerInfo.assign(bytes.begin() + kRootHelloBytes, bytes.end());
  arrival.socket = std::move(socket);
  arrival.socket.setPeerName(format("rank %d at %s", hello.rank, from.c_str()));
  arrivals_.emplace(hello.rank, std::move(arrival));
  LOG_INFO(kLogBootstrap, "%s: rank %d arrived from %s (%zu of %d)",
           name_.c_str(), hello.rank, from.c_str(), arrivals_.size(), nranks_);
  return HelloVerdict::taken();
}

HelloVerdict RootService::onCancel(Socket& socket) {
  LOG_INFO(kLogBootstrap, "%s: cancelled by %s", name_.c_str(),
           socket.peerName().c_str());
  Socket canceller = std::move(socket);  // closed once acknowledged
  std::vector<uint8_t> ack = encodeRootTable({}, {}, 0);
  try {
    canceller.sendAll(ack.data(), ack.size(), Deadline::after(kReplySeconds),
                      nullptr, "the cancel acknowledgement");
  } catch (const Error& e) {
    LOG_INFO(kLogBootstrap, "%s: %s", name_.c_str(), e.what());
  }
  cancelled_ = true;
  return HelloVerdict::taken();
}

void RootService::watchArrival(int rank) {
  auto seat = arrivals_.find(rank);
  if (seat == arrivals_.end()) return;  // told and let go meanwhile
  Arrival& arrival = seat->second;
  std::string reason;
  try {
    uint8_t byte;
    if (arrival.socket.recvSome(&byte, 1, "a rank's connection") == 0) return;
    reason = "sent bytes after its hello";
  } catch (const Error& e) {
    reason =
        e.code() == ncclRemoteError ? "it closed the connection" : e.what();
  }
  LOG_WARN(kLogBootstrap,
           "%s: %s left before all ranks arrived (%s); its seat is open again",
           name_.c_str(), arrival.socket.peerName().c_str(), reason.c_str());
  arrivals_.erase(seat);
  // The rank count is what the ranks present claim: a hello that claimed
  // another and left holds nothing up.
  if (arrivals_.empty()) nranks_ = 0;
}

void RootService::answer(Socket& socket, const Error& refusal) {
  constexpr size_t kRefusalsKept = 4;
  const std::string reason = refusal.what();
  if (refusals_.size() < kRefusalsKept &&
      std::find(refusals_.begin(), refusals_.end(), reason) == refusals_.end())
    refusals_.push_back(reason);
  std::vector<uint8_t> reply = encodeRootError(refusal.code(), reason);
  try {
    socket.sendAll(reply.data(), reply.size(), Deadline::after(kReplySeconds),
                   nullptr, "an error reply");
  } catch (const Error&) {
    // It is being dropped anyway; the acceptor's warning says why.
  }
}

void RootService::sendTables() {
  stopListening();
  std::vector<SocketAddress> addresses;
  std::vector<uint8_t> peerInfo;
  peerInfo.reserve(static_cast<size_t>(nranks_) * peerInfoBytes_);
  for (const auto& [rank, arrival] : arrivals_) {  // every rank, in order
    addresses.push_back(arrival.listenAddress);
    peerInfo.insert(peerInfo.end(), arrival.peerInfo.begin(),
                    arrival.peerInfo.end());
  }
  std::vector<uint8_t> table =
      encodeRootTable(addresses, peerInfo, peerInfoBytes_);
  LOG_INFO(kLogBootstrap,
           "%s: all %d rank(s) arrived; sending the %zu-byte "
           "peer table",
           name_.c_str(), nranks_, table.size());
  Deadline deadline = Deadline::after(timeoutSeconds_);
  for (auto& [rank, arrival] : arrivals_) {
    try {
      arrival.socket.sendAll(table.data(), table.size(), deadline, nullptr,
                             "the peer table");
    } catch (const Error& e) {
      LOG_WARN(kLogBootstrap, "%s: %s", name_.c_str(), e.what());
    }
    arrival.socket.close();
  }
}

void RootService::failArrived(ncclResult_t code, const std::string& message) {
  stopListening();
  tellArrived(code, message);
  for (auto& [rank, arrival] : arrivals_) arrival.socket.close();
}

void RootService::tellArrived(ncclResult_t code, const std::string& message) {
  std::vector<uint8_t> reply = encodeRootError(code, message);
  for (auto& [rank, arrival] : arrivals_) {
    try {
      arrival.socket.sendAll(reply.data(), reply.size(),
                             Deadline::after(kReplySeconds), nullptr,
                             "an error reply");
    } catch (const Error& e) {
      LOG_INFO(kLogBootstrap, "%s: %s", name_.c_str(), e.what());
    }
  }
}

std::string RootService::refusalsText() const {
  std::string text;
  for (const std::string& reason : refusals_)
    text += (text.empty() ? "; refused meanwhile: " : "; ") + reason;
  return text;
}

std::string RootService::missingRanks() const {
  std::vector<int> missing;
  for (int rank = 0; rank < nranks_; ++rank)
    if (arrivals_.count(rank) == 0) missing.push_back(rank);
  return formatRankList(missing);
}

}  // namespace hetccl
