#include "algo/cross_domain_links.h"

#include "algo/pieced_link.h"
#include "algo/pipeline.h"
#include "transport/transport_registry.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

HostSlot hostSlotOf(const std::vector<RankPlacement>& placements, int rank) {
  HostSlot slot{0, 0};
  for (int r = 0; r < static_cast<int>(placements.size()); ++r) {
    if (placements[r].hostId != placements[rank].hostId) continue;
    if (r < rank) ++slot.index;
    ++slot.ranks;
  }
  return slot;
}

}  // namespace

// Every registered transport is connected, since connecting is collective,
// even by the ranks that need none of its links.
CrossDomainLinks::CrossDomainLinks(
    Oob& oob, const std::vector<RankPlacement>& placements,
    const DomainMap& domains, const TransportSettings& transports,
    double setupTimeoutSeconds, const PlanSettings& plans,
    std::shared_ptr<AbortSignal> abort,
    std::shared_ptr<const PeerLiveness> liveness,
    std::shared_ptr<const CallLog> calls, std::shared_ptr<WaitingCall> waiting,
    const DeviceModule* gpuModule)
    : rank_(oob.rank()),
      choice_(std::make_shared<TransportChoice>(oob, placements, domains,
                                                transports.selection)),
      waiting_(waiting ? std::move(waiting) : std::make_shared<WaitingCall>()) {
  std::vector<int> others;
  for (int r = 0; r < oob.nranks(); ++r)
    if (domains.domainOf(r) != domains.domainOf(rank_)) others.push_back(r);
  std::map<const Transport*, std::vector<int>> peersOf;
  for (int r : others) peersOf[&choice_->between(rank_, r)].push_back(r);
  // Said once per communicator, where the choice is made: a slower
  // transport than the machine could have goes unnoticed otherwise.
  const std::string fallback = choice_->fallbackBetweenHosts(rank_, others);
  if (!fallback.empty())
    LOG_WARN(kLogNet, "rank %d: %s", rank_, fallback.c_str());
  const HostSlot slot = hostSlotOf(placements, rank_);
  for (const Transport* transport : registeredTransports()) {
    const std::vector<int>& peers = peersOf[transport];
    linkSets_.push_back(
        transport->connect({oob, transports, setupTimeoutSeconds, peers, abort,
                            liveness, calls, slot, gpuModule}));
    for (int peer : peers)
      links_[peer] =
          std::make_shared<PiecedLink>(linkSets_.back()->link(peer),
                                       crossDomainPieceBytes(plans.chunkBytes));
    summary_ += format("%s%zu %s", summary_.empty() ? "" : ", ", peers.size(),
                       transport->name());
  }
}

CrossDomainLinks::~CrossDomainLinks() = default;

std::shared_ptr<PiecedLink> CrossDomainLinks::shared(int peer) const {
  auto it = links_.find(peer);
  if (it == links_.end())
    fail(ncclInternalError, "rank %d has no link to rank %d", rank_, peer);
  return it->second;
}

Link& CrossDomainLinks::to(int peer) const { return *shared(peer); }

void CrossDomainLinks::poll() const {
  for (const auto& set : linkSets_) set->poll();
}

size_t CrossDomainLinks::bytesSent() const {
  size_t total = 0;
  for (const auto& entry : links_) total += entry.second->bytesSent();
  return total - sentBefore_;
}

size_t CrossDomainLinks::bytesReceived() const {
  size_t total = 0;
  for (const auto& entry : links_) total += entry.second->bytesReceived();
  return total - receivedBefore_;
}

void CrossDomainLinks::startCounting() {
  sentBefore_ += bytesSent();
  receivedBefore_ += bytesReceived();
}

}  // namespace hetccl
