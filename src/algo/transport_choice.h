// Which transport links each pair of ranks of different domains. Every rank
// gets the same answer for every pair: it depends only on what every rank
// knows (hosts, HETCCL_TRANSPORT, and between hosts the preferences that
// are all-gathered here), so both ends of a link agree, and rank 0 can
// describe the whole communicator's links.
#pragma once

#include <string>
#include <vector>

#include <cstdint>

#include "algo/domains.h"
#include "transport/transport_registry.h"
#include "util/oob.h"

namespace hetccl {

class TransportChoice {
 public:
  // Collective over `oob` (the whole communicator). Asks for and
  // all-gathers the ranks' preferences only when `auto` must pick between
  // hosts, and asks only the ranks with a peer of another domain on
  // another host (asking may load a transport's library).
  TransportChoice(Oob& oob, const std::vector<RankPlacement>& placements,
                  const DomainMap& domains, const std::string& transport);

  // Throws ncclInvalidUsage if no transport suits both ranks.
  const Transport& between(int a, int b) const;
  // Why `auto` links `rank` to some of `peers` on other hosts by a slower
  // transport than this machine could have, and what to install or set:
  // "links to 2 ranks on other hosts use tcp: UCX 1.13.1 has no RDMA
  // transport here (...); install ...; or set HETCCL_TRANSPORT=tcp to
  // choose tcp knowingly". Empty when the transport was forced or nothing
  // is missing here (a peer that lacks it says so in its own log).
  std::string fallbackBetweenHosts(int rank,
                                   const std::vector<int>& peers) const;

 private:
  TransportSelection selection_;
  std::vector<uint64_t> hosts_;
  // Per rank; empty unless gathered.
  std::vector<std::vector<uint8_t>> preferences_;
};

}  // namespace hetccl
