#include "bootstrap/root_service.h"

#include <poll.h>

#include <algorithm>

#include "util/error.h"
#include "util/log.h"
#include "util/rank_list.h"

namespace hetccl {
namespace {

// Replies that go to ranks which may already be gone get little patience.
constexpr double kReplySeconds = 2.0;

}  // namespace

RootService::RootService(Listener listener, const Secret& secret,
                         double timeoutSeconds,
                         std::function<void()> onStopListening)
    : listener_(std::move(listener)),
      address_(listener_.address()),
      secret_(secret),
      timeoutSeconds_(timeoutSeconds),
      onStopListening_(std::move(onStopListening)),
      name_("bootstrap root at " + address_.toString()) {}

RootService::~RootService() { stopListening(); }

void RootService::stopListening() {
  listener_.close();
  if (onStopListening_) {
    auto callback = std::move(onStopListening_);
    onStopListening_ = nullptr;
    callback();
  }
}

void RootService::run() {
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
  }
}

void RootService::pollOnce(const Deadline& deadline) {
  std::vector<pollfd> fds;
  fds.push_back({listener_.fd(), POLLIN, 0});
  for (const auto& pending : pending_)
    fds.push_back({pending->socket.fd(), POLLIN, 0});
  std::vector<int> watched;
  for (const auto& [rank, arrival] : arrivals_) {
    fds.push_back({arrival.socket.fd(), POLLIN, 0});
    watched.push_back(rank);
  }
  pollSlice(fds, deadline);

  size_t index = 1;
  for (size_t i = 0; i < pending_.size(); ++i, ++index) {
    Pending& pending = *pending_[i];
    if (fds[index].revents != 0) readHello(pending);
    if (!pending.done && pending.helloDeadline.expired())
      drop(pending, format("no complete hello within %g s (got %zu bytes)",
                           pending.helloDeadline.seconds(), pending.filled));
  }
  for (int rank : watched) {
    if (fds[index++].revents != 0) watchArrival(rank);
  }
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [](const auto& p) { return p->done; }),
                 pending_.end());
  if (fds[0].revents != 0) acceptPending();
}

void RootService::acceptPending() {
  while (auto socket = listener_.tryAccept()) {
    auto pending = std::make_unique<Pending>();
    pending->socket = std::move(*socket);
    pending->helloDeadline = Deadline::after(kHelloTimeoutSeconds);
    pending->buffer.resize(kRootHelloBytes);
    LOG_TRACE(kLogBootstrap, "%s: connection from %s", name_.c_str(),
              pending->socket.peerName().c_str());
    pending_.push_back(std::move(pending));
    if (pending_.size() > kMaxPendingConnections) dropOldestPending();
  }
}

// Connections that have not said who they are yet are capped, so that a
// flood of silent ones cannot use up the process's descriptors before the
// ranks arrive: the oldest goes, since a rank says hello at once.
void RootService::dropOldestPending() {
  if (++crowdedOut_ == 1 || crowdedOut_ % 100 == 0)
    LOG_WARN(kLogBootstrap,
             "%s: more than %zu connections waited for their hello; dropped "
             "the oldest (%zu so far)",
             name_.c_str(), kMaxPendingConnections, crowdedOut_);
  pending_.erase(pending_.begin());
}

void RootService::readHello(Pending& pending) {
  try {
    while (!pending.done) {
      size_t n = pending.socket.recvSome(pending.buffer.data() + pending.filled,
                                         pending.buffer.size() - pending.filled,
                                         "a bootstrap hello");
      if (n == 0) return;
      pending.filled += n;
      if (!pending.hello && pending.filled >= kMagicBytes &&
          !hasRootHelloMagic(pending.buffer.data())) {
        drop(pending, "sent bytes that are not a HetCCL bootstrap hello");
        return;
      }
      if (!pending.prefixChecked && pending.filled >= kRootHelloPrefixBytes) {
        checkPrefix(pending);
        if (pending.done) return;
      }
      if (!pending.hello && pending.filled == kRootHelloBytes)
        onHelloHeader(pending);
      else if (pending.hello && pending.filled == pending.buffer.size())
        onJoin(pending);
    }
  } catch (...) {
    // Whatever one connection did (out of memory included) ends only it:
    // the root keeps serving the others.
    drop(pending, currentExceptionAsError().what());
  }
}

// The secret first: a stranger is refused as such, whatever version it
// claims. A rank with the secret but of another protocol version belongs
// to this job and can never join it, so the whole communicator fails now
// rather than at the timeout.
void RootService::checkPrefix(Pending& pending) {
  pending.prefixChecked = true;
  RootHelloPrefix prefix = decodeRootHelloPrefix(pending.buffer.data());
  if (!secretsEqual(prefix.secret, secret_))
    return refuse(pending, ncclInvalidArgument,
                  "wrong secret: the ncclUniqueId this rank used belongs to "
                  "another communicator (or was changed)");
  if (fatal_) return refuse(pending, fatal_->code(), fatal_->what());
  if (prefix.version == kBootstrapProtocolVersion) return;
  std::string message = format(
      "a rank of this communicator (from %s) speaks bootstrap "
      "protocol version %u, the root version %u: every node needs "
      "the same HetCCL release",
      pending.socket.peerName().c_str(), prefix.version,
      kBootstrapProtocolVersion);
  refuse(pending, ncclInvalidUsage, message);
  failCommunicator(ncclInvalidUsage, message);
}

void RootService::failCommunicator(ncclResult_t code,
                                   const std::string& message) {
  LOG_WARN(kLogBootstrap, "%s: the communicator cannot form: %s", name_.c_str(),
           message.c_str());
  fatal_ = Error(code, message);
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
  arrivals_.clear();
}

void RootService::onHelloHeader(Pending& pending) {
  RootHello hello;
  try {
    hello = decodeRootHello(pending.buffer.data());
  } catch (const Error& e) {
    refuse(pending, ncclInvalidArgument, e.what());
    return;
  }
  if (hello.request == RootRequest::kCancel) {
    onCancel(pending);
    return;
  }
  if (hello.peerInfoBytes > kMaxPeerInfoBytes) {
    refuse(pending, ncclInvalidArgument,
           format("peer info of %u bytes is larger than the limit of %u",
                  hello.peerInfoBytes, kMaxPeerInfoBytes));
    return;
  }
  // Refused before the rest is read, and before the claim fixes the rank
  // count that the real ranks must match.
  std::string bad = badJoin(hello);
  if (!bad.empty()) return refuse(pending, ncclInvalidArgument, bad);
  pending.hello = hello;
  pending.buffer.resize(kRootHelloBytes + hello.peerInfoBytes);
  if (pending.filled == pending.buffer.size()) onJoin(pending);
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

void RootService::onJoin(Pending& pending) {
  const RootHello& hello = *pending.hello;
  std::string from = pending.socket.peerName();
  if (nranks_ == 0) {
    nranks_ = hello.nranks;
    firstRank_ = hello.rank;
    peerInfoBytes_ = hello.peerInfoBytes;
  } else if (hello.nranks != nranks_) {
    return refuse(pending, ncclInvalidUsage,
                  format("rank %d says the communicator has %d ranks, but "
                         "rank %d said %d",
                         hello.rank, hello.nranks, firstRank_, nranks_));
  } else if (hello.peerInfoBytes != peerInfoBytes_) {
    // Ranks of different builds: they can never form this communicator.
    std::string message = format(
        "rank %d sent %u bytes of peer info, rank %d sent %u: the "
        "ranks run different HetCCL builds; every node needs the "
        "same HetCCL release",
        hello.rank, hello.peerInfoBytes, firstRank_, peerInfoBytes_);
    refuse(pending, ncclInvalidUsage, message);
    return failCommunicator(ncclInvalidUsage, message);
  }
  auto seat = arrivals_.find(hello.rank);
  if (seat != arrivals_.end())
    return refuse(pending, ncclInvalidUsage,
                  format("rank %d joined twice: first from %s, again from %s "
                         "(is one ncclUniqueId used by two communicators?)",
                         hello.rank, seat->second.socket.peerName().c_str(),
                         from.c_str()));
  Arrival arrival;
  arrival.listenAddress = hello.listenAddress;
  arrival.peerInfo.assign(pending.buffer.begin() + kRootHelloBytes,
                          pending.buffer.end());
  arrival.socket = std::move(pending.socket);
  arrival.socket.setPeerName(format("rank %d at %s", hello.rank, from.c_str()));
  arrivals_.emplace(hello.rank, std::move(arrival));
  pending.done = true;
  LOG_INFO(kLogBootstrap, "%s: rank %d arrived from %s (%zu of %d)",
           name_.c_str(), hello.rank, from.c_str(), arrivals_.size(), nranks_);
}

void RootService::onCancel(Pending& pending) {
  LOG_INFO(kLogBootstrap, "%s: cancelled by %s", name_.c_str(),
           pending.socket.peerName().c_str());
  std::vector<uint8_t> ack = encodeRootTable({}, {}, 0);
  try {
    pending.socket.sendAll(ack.data(), ack.size(),
                           Deadline::after(kReplySeconds), nullptr,
                           "the cancel acknowledgement");
  } catch (const Error& e) {
    LOG_INFO(kLogBootstrap, "%s: %s", name_.c_str(), e.what());
  }
  pending.socket.close();
  pending.done = true;
  cancelled_ = true;
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

// A flood of strangers must not flood the log: the throttle says which
// drops are warnings.
void RootService::drop(Pending& pending, const std::string& reason) {
  const LogLevel level = drops_.next();
  HETCCL_LOG(level, kLogBootstrap,
             "%s: dropped connection from %s: %s (%zu dropped so far%s)",
             name_.c_str(), pending.socket.peerName().c_str(), reason.c_str(),
             drops_.count(), drops_.note().c_str());
  pending.socket.close();
  pending.done = true;
}

void RootService::refuse(Pending& pending, ncclResult_t code,
                         const std::string& reason) {
  constexpr size_t kRefusalsKept = 4;
  if (refusals_.size() < kRefusalsKept &&
      std::find(refusals_.begin(), refusals_.end(), reason) == refusals_.end())
    refusals_.push_back(reason);
  std::vector<uint8_t> reply = encodeRootError(code, reason);
  try {
    pending.socket.sendAll(reply.data(), reply.size(),
                           Deadline::after(kReplySeconds), nullptr,
                           "an error reply");
  } catch (const Error&) {
    // It is being dropped anyway; the warning below says why.
  }
  drop(pending, reason);
}

void RootService::sendTables() {
  stopListening();
  pending_.clear();
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
  pending_.clear();
  std::vector<uint8_t> reply = encodeRootError(code, message);
  for (auto& [rank, arrival] : arrivals_) {
    try {
      arrival.socket.sendAll(reply.data(), reply.size(),
                             Deadline::after(kReplySeconds), nullptr,
                             "an error reply");
    } catch (const Error& e) {
      LOG_INFO(kLogBootstrap, "%s: %s", name_.c_str(), e.what());
    }
    arrival.socket.close();
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
