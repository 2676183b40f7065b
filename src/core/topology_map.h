// A compact map of what a communicator is made of: its hosts, its domains
// (runtime, back-end, ranks, devices) and the transports that link each
// pair of domains. Rank 0 logs it at init (INFO, INIT) and hetccl-perf
// prints it in its header (hetcclCommTopology), so that the user of a
// mixed cluster sees at once what HetCCL built.
#pragma once

#include <string>
#include <vector>

#include "algo/domains.h"
#include "algo/transport_choice.h"
#include "core/peer_info.h"
#include "runtime/runtime.h"

namespace hetccl {

struct TopologyFacts {
  const std::vector<PeerInfo>& peers;
  const DomainMap& domains;
  // Per rank: the runtime whose back-end runs its domain (the host collectives'
  // for a GPU emulated on the host).
  const std::vector<RuntimeKind>& backends;
  const TransportChoice* links;  // null with one domain
  // Whether the GPU ranks of this host take the stream-driven path.
  bool streamDriven;
};

// One line per host, per domain and per pair of linked domains, after a
// heading line; no trailing newlines.
std::vector<std::string> describeTopology(const TopologyFacts& facts);

}  // namespace hetccl
