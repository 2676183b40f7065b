#include "algo/transport_choice.h"

#include <algorithm>

#include "util/error.h"

namespace hetccl {
namespace {

bool hasPeerOfOtherDomainAndHost(const std::vector<RankPlacement>& placements,
                                 const DomainMap& domains, int rank) {
  for (int r = 0; r < domains.nranks(); ++r)
    if (placements[r].hostId != placements[rank].hostId &&
        domains.domainOf(r) != domains.domainOf(rank))
      return true;
  return false;
}

bool crossDomainPairBetweenHosts(const std::vector<RankPlacement>& placements,
                                 const DomainMap& domains) {
  for (int r = 0; r < domains.nranks(); ++r)
    if (hasPeerOfOtherDomainAndHost(placements, domains, r)) return true;
  return false;
}

// Every rank's preferences between hosts; a rank without a peer of another
// domain on another host asks nothing and says 0 for all (no pair of its
// needs them).
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

// What this machine lacks for the transports that `auto` would want more
// between hosts than `taken` with it; empty if nothing.
std::string missingBesides(const Transport& taken) {
  std::string missing;
  for (const Transport* transport : registeredTransports()) {
    if (transport == &taken || !transport->reachesOtherHosts() ||
        transport->preferenceAtBest() <= taken.preference(false))
      continue;
    const std::string why = transport->missingBetweenHosts();
    if (!why.empty()) missing += (missing.empty() ? "" : "; ") + why;
  }
  return missing;
}

}  // namespace

TransportChoice::TransportChoice(Oob& oob,
                                 const std::vector<RankPlacement>& placements,
                                 const DomainMap& domains,
                                 const std::string& transport)
    : selection_(TransportSelection::parse(transport)),
      preferences_(oob.nranks()) {
  for (const RankPlacement& placement : placements)
    hosts_.push_back(placement.hostId);
  if (selection_.forced() == nullptr &&
      crossDomainPairBetweenHosts(placements, domains))
    preferences_ = preferencesOfEveryRank(
        oob, selection_,
        hasPeerOfOtherDomainAndHost(placements, domains, oob.rank()));
}

const Transport& TransportChoice::between(int a, int b) const {
  if (hosts_[a] == hosts_[b]) return selection_.onOneHost();
  return selection_.betweenHosts(preferences_[a], preferences_[b]);
}

// Counted by transport in registration order, so the text is the same on
// every run.
std::string TransportChoice::fallbackBetweenHosts(
    int rank, const std::vector<int>& peers) const {
  if (selection_.forced() != nullptr) return "";
  std::string text;
  for (const Transport* taken : registeredTransports()) {
    const int count = static_cast<int>(
        std::count_if(peers.begin(), peers.end(), [&](int peer) {
          return hosts_[peer] != hosts_[rank] && &between(rank, peer) == taken;
        }));
    if (count == 0) continue;
    const std::string missing = missingBesides(*taken);
    if (missing.empty()) continue;
    text += format(
        "%slinks to %d rank%s on other hosts use %s: %s; or set "
        "HETCCL_TRANSPORT=%s to choose %s knowingly",
        text.empty() ? "" : "; ", count, count == 1 ? "" : "s", taken->name(),
        missing.c_str(), taken->name(), taken->name());
  }
  return text;
}

}  // namespace hetccl
