#include "transport/tcp/tcp_link_set.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "transport/lane_placement.h"
#include "transport/peer_list.h"
#include "transport/tcp/tcp_connect.h"
#include "transport/tcp/tcp_link.h"
#include "transport/tcp/tcp_wire.h"
#include "util/error.h"
#include "util/listener.h"
#include "util/log.h"
#include "util/net_interfaces.h"

namespace hetccl {
namespace {

// All-gathers every rank's endpoint; this rank's comes from `self`.
std::vector<TcpEndpoint> gatherEndpoints(Oob& oob, const TcpEndpoint& self) {
  std::vector<uint8_t> table(TcpEndpoint::kEncodedBytes * oob.nranks());
  self.encode(table.data() + TcpEndpoint::kEncodedBytes * oob.rank());
  oob.allGather(table.data(), TcpEndpoint::kEncodedBytes);
  std::vector<TcpEndpoint> endpoints;
  for (int r = 0; r < oob.nranks(); ++r)
    endpoints.push_back(
        TcpEndpoint::decode(table.data() + TcpEndpoint::kEncodedBytes * r, r));
  return endpoints;
}

}  // namespace

TcpLinkSet::TcpLinkSet(Oob& oob, const std::vector<int>& peers,
                       const TcpSettings& settings, double setupTimeoutSeconds,
                       std::shared_ptr<AbortSignal> abort,
                       std::shared_ptr<const CallLog> calls)
    : rank_(oob.rank()), settings_(settings) {
  HETCCL_CHECK_ARG(abort != nullptr, "tcp transport needs an abort signal");
  std::vector<int> sortedPeers =
      checkedLinkPeers("tcp", peers, rank_, oob.nranks());
  Listener listener(chooseLocalAddress());
  setTcpBufferSizes(listener.fd(), settings_.socketBufferBytes);

  TcpEndpoint self;
  self.address = listener.address();
  self.secret = randomSecret();
  self.socketsPerLink = static_cast<uint32_t>(settings_.socketsPerLink);
  self.stripeBytes = static_cast<uint32_t>(settings_.stripeBytes);
  self.threads = static_cast<uint32_t>(settings_.threads);
  self.splitBytes = static_cast<uint32_t>(settings_.splitBytes);
  std::vector<TcpEndpoint> endpoints = gatherEndpoints(oob, self);
  // Rank 0 decides what both ends of every link must agree on.
  if (endpoints[0].socketsPerLink < 1 ||
      endpoints[0].socketsPerLink > kMaxTcpSocketsPerLink ||
      endpoints[0].stripeBytes < kMinTcpStripeBytes ||
      endpoints[0].threads < 1 || endpoints[0].threads > kMaxTcpThreads ||
      endpoints[0].splitBytes < kMinSplitBytes)
    fail(ncclInternalError,
         "tcp transport setup: rank 0 sent an unusable geometry (%u "
         "sockets, %u threads, %u-byte stripes, %u-byte parts)",
         endpoints[0].socketsPerLink, endpoints[0].threads,
         endpoints[0].stripeBytes, endpoints[0].splitBytes);
  settings_.socketsPerLink = static_cast<int>(endpoints[0].socketsPerLink);
  settings_.threads = static_cast<int>(endpoints[0].threads);
  settings_.stripeBytes = endpoints[0].stripeBytes;
  settings_.splitBytes = endpoints[0].splitBytes;

  TcpConnectPlan plan;
  plan.rank = rank_;
  plan.peers = sortedPeers;
  for (const auto& e : endpoints) plan.addresses.push_back(e.address);
  plan.secret = endpoints[0].secret;
  plan.socketsPerLink = settings_.socketsPerLink;
  plan.socketBufferBytes = settings_.socketBufferBytes;
  plan.timeoutSeconds = setupTimeoutSeconds;
  TcpConnections connections =
      connectTcpPeers(plan, std::move(listener), AbortFlags(abort->flag()));

  // Lane k of every link: sockets [k*S/L, (k+1)*S/L) of it, the same
  // ones at both ends (sockets are numbered alike there). A rank without
  // peers starts no thread.
  const int lanes = connections.empty()
                        ? 0
                        : std::min(settings_.threads, settings_.socketsPerLink);
  std::vector<std::vector<std::unique_ptr<StripedChannel>>> channels(lanes);
  std::vector<std::shared_ptr<LinkCounters>> counters;
  for (auto& [peer, sockets] : connections) {
    counters.push_back(std::make_shared<LinkCounters>());
    for (int lane = 0; lane < lanes; ++lane) {
      std::vector<Socket> share;
      for (size_t s = sockets.size() * lane / lanes;
           s < sockets.size() * (lane + 1) / lanes; ++s)
        share.push_back(std::move(sockets[s]));
      channels[lane].push_back(std::make_unique<StripedChannel>(
          rank_, peer, std::move(share), settings_.stripeBytes, counters.back(),
          abort, calls));
    }
  }
  for (auto& laneChannels : channels)
    lanes_.push_back(std::make_shared<TcpProgressThread>(
        rank_, std::move(laneChannels), abort, settings_.pollMicroseconds,
        settings_.busyPollMicroseconds));
  size_t index = 0;
  for (int peer : sortedPeers) {
    links_[peer] = std::make_shared<TcpLink>(
        rank_, peer, index, lanes_, counters[index],
        std::chrono::microseconds(settings_.pollMicroseconds),
        settings_.stripeBytes, settings_.splitBytes);
    ++index;
  }
  LOG_INFO(kLogNet,
           "tcp transport (rank %d): %zu link(s) over %s, %d socket(s) "
           "each on %d thread(s), %zu-byte stripes, transfers cut into "
           "parts of at least %zu bytes; threads poll %d us "
           "after activity, %d us with transfers in flight",
           rank_, links_.size(), self.address.toString().c_str(),
           settings_.socketsPerLink, lanes, settings_.stripeBytes,
           settings_.splitBytes, settings_.pollMicroseconds,
           settings_.busyPollMicroseconds);
}

TcpLinkSet::~TcpLinkSet() {
  for (auto& lane : lanes_) lane->stop();
}

std::shared_ptr<Link> TcpLinkSet::link(int peer) const {
  auto it = links_.find(peer);
  HETCCL_CHECK_ARG(it != links_.end(),
                   "tcp transport: rank %d has no link to rank %d", rank_,
                   peer);
  return it->second;
}

}  // namespace hetccl
