#include "algo/cross_domain_links.h"

#include <algorithm>

#include "algo/pieced_link.h"
#include "algo/pipeline.h"
#include "transport/transport_registry.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {

namespace {

bool crossDomainPairBetweenHosts(const std::vector<RankPlacement>& placements,
                                 const DomainMap& domains) {
  for (size_t r = 0; r < placements.size(); ++r)
    for (size_t s = r + 1; s < placements.size(); ++s)
      if (placements[r].hostId != placements[s].hostId &&
          domains.domainOf(static_cast<int>(r)) !=
              domains.domainOf(static_cast<int>(s)))
        return true;
  return false;
}

// Every rank's preferences between hosts (TransportSelection), all-gathered
// when `auto` has a pair of other hosts to link; a rank without such a peer
// asks nothing and says 0 for all (no pair of its needs them).
std::vector<std::vector<uint8_t>> preferencesOfEveryRank(
    Oob& oob, const TransportSelection& selection, bool askHere) {
  const size_t count = registeredTransports().size();
  std::vector<uint8_t> table(count * oob.nranks(), 0);
  if (askHere) {
    std::vector<uint8_t> mine = selection.preferencesBetweenHosts();
    std::copy(mine.begin(), mine.end(), table.begin() + count * oob.rank());
  }
  oob.allGather(table.data(), count);
  std::vector<std::vector<uint8_t>> preferences;
  for (int r = 0; r < oob.nranks(); ++r)
    preferences.emplace_back(table.begin() + count * r,
                             table.begin() + count * (r + 1));
  return preferences;
}

}  // namespace

// Every registered transport is connected, since connecting is collective,
// even by the ranks that need none of its links.
CrossDomainLinks::CrossDomainLinks(Oob& oob,
                                   const std::vector<RankPlacement>& placements,
                                   const DomainMap& domains,
                                   const Settings& settings,
                                   std::shared_ptr<AbortSignal> abort,
                                   std::shared_ptr<const PeerLiveness> liveness)
    : rank_(oob.rank()) {
  auto selection = TransportSelection::parse(settings.transport);
  std::vector<int> otherHostPeers;
  std::map<const Transport*, std::vector<int>> peersOf;
  for (int r = 0; r < oob.nranks(); ++r) {
    if (domains.domainOf(r) == domains.domainOf(rank_)) continue;
    if (placements[r].hostId == placements[rank_].hostId)
      peersOf[&selection.onOneHost()].push_back(r);
    else
      otherHostPeers.push_back(r);
  }
  std::vector<std::vector<uint8_t>> preferences(oob.nranks());
  if (selection.forced() == nullptr &&
      crossDomainPairBetweenHosts(placements, domains))
    preferences =
        preferencesOfEveryRank(oob, selection, !otherHostPeers.empty());
  for (int r : otherHostPeers)
    peersOf[&selection.betweenHosts(preferences[rank_], preferences[r])]
        .push_back(r);
  for (const Transport* transport : registeredTransports()) {
    const std::vector<int>& peers = peersOf[transport];
    linkSets_.push_back(
        transport->connect({oob, settings, peers, abort, liveness}));
    for (int peer : peers)
      links_[peer] = std::make_shared<PiecedLink>(
          linkSets_.back()->link(peer),
          crossDomainPieceBytes(settings.chunkBytes));
    summary_ += format("%s%zu %s", summary_.empty() ? "" : ", ", peers.size(),
                       transport->name());
  }
}

CrossDomainLinks::~CrossDomainLinks() = default;

std::shared_ptr<Link> CrossDomainLinks::shared(int peer) const {
  auto it = links_.find(peer);
  if (it == links_.end())
    fail(ncclInternalError, "rank %d has no link to rank %d", rank_, peer);
  return it->second;
}

Link& CrossDomainLinks::to(int peer) const { return *shared(peer); }

size_t CrossDomainLinks::bytesSent() const {
  size_t total = 0;
  for (const auto& entry : links_) total += entry.second->bytesSent();
  return total;
}

size_t CrossDomainLinks::bytesReceived() const {
  size_t total = 0;
  for (const auto& entry : links_) total += entry.second->bytesReceived();
  return total;
}

}  // namespace hetccl
