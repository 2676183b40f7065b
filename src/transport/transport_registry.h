// The registered transports and the one rule that picks a transport for a
// pair of ranks (HETCCL_TRANSPORT).
#pragma once

#include <string>
#include <vector>

#include "transport/transport.h"

namespace hetccl {

// Every transport this build has, in registration order.
const std::vector<const Transport*>& registeredTransports();
// "shm, tcp": for messages and docs.
std::string registeredTransportNames();

// Which transport links a pair of ranks: HETCCL_TRANSPORT's value, read
// once per communicator. "auto" (or empty) takes the highest-priority
// transport that can reach the peer; a name forces that transport for
// every cross-domain link.
class TransportSelection {
 public:
  // Throws ncclInvalidArgument naming the registered transports if `value`
  // is neither empty, "auto" nor one of them.
  static TransportSelection parse(const std::string& value);

  // The transport between this rank and a peer on the same host or not;
  // throws ncclInvalidUsage if a forced transport cannot reach it.
  const Transport& choose(bool sameHost) const;
  // The forced transport, or null for auto.
  const Transport* forced() const { return forced_; }

 private:
  explicit TransportSelection(const Transport* forced) : forced_(forced) {}
  const Transport* forced_;
};

}  // namespace hetccl
