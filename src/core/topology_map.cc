#include "core/topology_map.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "domain/domain_backend.h"
#include "util/error.h"
#include "util/rank_list.h"

namespace hetccl {
namespace {

// Hosts numbered in the order of their lowest rank, as domains are.
struct Hosts {
  std::vector<int> indexOf;  // by rank
  std::vector<std::vector<int>> members;
};

Hosts numberHosts(const std::vector<PeerInfo>& peers) {
  Hosts hosts;
  std::map<uint64_t, int> index;
  for (int r = 0; r < static_cast<int>(peers.size()); ++r) {
    auto found = index.emplace(peers[r].hostId, hosts.members.size());
    if (found.second) hosts.members.emplace_back();
    hosts.indexOf.push_back(found.first->second);
    hosts.members[found.first->second].push_back(r);
  }
  return hosts;
}

// "rank 3", "ranks 0-2".
std::string ranksText(const std::vector<int>& ranks) {
  return format("rank%s %s", ranks.size() > 1 ? "s" : "",
                formatRankList(ranks).c_str());
}

std::string hostName(const PeerInfo& peer) {
  return std::string(peer.hostname,
                     strnlen(peer.hostname, sizeof(peer.hostname)));
}

// "host 0", "hosts 0,1": where a domain's ranks run.
std::string hostsOf(const std::vector<int>& members, const Hosts& hosts) {
  std::vector<int> found;
  for (int rank : members) {
    int host = hosts.indexOf[rank];
    if (std::find(found.begin(), found.end(), host) == found.end())
      found.push_back(host);
  }
  std::sort(found.begin(), found.end());
  return format("host%s %s", found.size() > 1 ? "s" : "",
                formatRankList(found).c_str());
}

// "cuda GPUs 0,1" or "CPU".
std::string devicesOf(const std::vector<int>& members,
                      const std::vector<PeerInfo>& peers) {
  const PeerInfo& first = peers[members.front()];
  if (first.runtime == static_cast<int>(RuntimeKind::Host)) return "CPU";
  std::string devices;
  for (int rank : members)
    devices += format("%s%d", devices.empty() ? "" : ",", peers[rank].device);
  return format("%s GPU%s %s",
                runtimeKindName(static_cast<RuntimeKind>(first.runtime)),
                members.size() > 1 ? "s" : "", devices.c_str());
}

// "tcp (4 rank pairs)", "shm (2 rank pairs), tcp (2 rank pairs)".
std::string linksBetween(const TopologyFacts& facts, int a, int b) {
  std::map<std::string, size_t> pairsBy;
  for (int r : facts.domains.members(a))
    for (int s : facts.domains.members(b))
      ++pairsBy[facts.links->between(r, s).name()];
  std::string text;
  for (const auto& entry : pairsBy)
    text +=
        format("%s%s (%zu rank pair%s)", text.empty() ? "" : ", ",
               entry.first.c_str(), entry.second, entry.second > 1 ? "s" : "");
  return text;
}

// "net on rank 0: net plugin X (...), devices ...": what the transports
// that link some pair of domains loaded in this process (rank 0's view).
void describeLoadedTransports(const TopologyFacts& facts,
                              std::vector<std::string>& lines) {
  std::set<const Transport*> used;
  const int domains = facts.domains.count();
  for (int a = 0; a < domains; ++a)
    for (int b = a + 1; b < domains; ++b)
      for (int r : facts.domains.members(a))
        for (int s : facts.domains.members(b))
          used.insert(&facts.links->between(r, s));
  for (const Transport* transport : used) {
    const std::string loaded = transport->loadedHere();
    if (!loaded.empty())
      lines.push_back(format("%s here: %s", transport->name(), loaded.c_str()));
  }
}

}  // namespace

std::vector<std::string> describeTopology(const TopologyFacts& facts) {
  const Hosts hosts = numberHosts(facts.peers);
  const int domains = facts.domains.count();
  std::vector<std::string> lines;
  lines.push_back(format("%zu rank%s, %d domain%s, %zu host%s",
                         facts.peers.size(), facts.peers.size() > 1 ? "s" : "",
                         domains, domains > 1 ? "s" : "", hosts.members.size(),
                         hosts.members.size() > 1 ? "s" : ""));
  for (size_t h = 0; h < hosts.members.size(); ++h)
    lines.push_back(format("host %zu (%s): %s", h,
                           hostName(facts.peers[hosts.members[h][0]]).c_str(),
                           ranksText(hosts.members[h]).c_str()));
  for (int d = 0; d < domains; ++d) {
    const std::vector<int>& members = facts.domains.members(d);
    lines.push_back(
        format("domain %d: %s on %s, %s, %s", d, ranksText(members).c_str(),
               hostsOf(members, hosts).c_str(),
               devicesOf(members, facts.peers).c_str(),
               domainBackendFor(facts.backends[members.front()]).name()));
  }
  for (int a = 0; a < domains && facts.links; ++a)
    for (int b = a + 1; b < domains; ++b)
      lines.push_back(format("domains %d and %d linked by %s", a, b,
                             linksBetween(facts, a, b).c_str()));
  if (facts.links) describeLoadedTransports(facts, lines);
  if (facts.streamDriven)
    lines.push_back(
        "GPU ranks of this host: collectives and send/receive stream-driven "
        "through shared pinned memory (no proxy thread)");
  return lines;
}

}  // namespace hetccl
