// The registered transports and the one rule that picks a transport for a
// pair of ranks (HETCCL_TRANSPORT).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace hetccl {

// Every transport this build has, in registration order.
const std::vector<const Transport*>& registeredTransports();
// "shm, tcp": for messages and docs.
std::string registeredTransportNames();

// Which transport links a pair of ranks: HETCCL_TRANSPORT's value, read
// once per communicator. "auto" (or empty) takes, on one host, the
// transport with the highest preference(true); between hosts, the one that
// the less eager rank of the pair wants most (preferences exchanged, so
// both ends agree). A name forces that transport for every cross-domain
// link.
class TransportSelection {
 public:
  // Throws ncclInvalidArgument naming the registered transports if `value`
  // is neither empty, "auto" nor one of them.
  static TransportSelection parse(const std::string& value);

  // The transport between two ranks of one host.
  const Transport& onOneHost() const;
  // This rank's preference(false) for every registered transport, in
  // registration order (capped at 255); asking may load a transport's
  // library, so only ranks with a peer on another host ask.
  std::vector<uint8_t> preferencesBetweenHosts() const;
  // The transport between ranks of different hosts whose preferences are
  // `mine` and `theirs`; throws ncclInvalidUsage if a forced transport
  // cannot reach another host, or if no transport suits both.
  const Transport& betweenHosts(const std::vector<uint8_t>& mine,
                                const std::vector<uint8_t>& theirs) const;
  // The forced transport, or null for auto.
  const Transport* forced() const { return forced_; }

 private:
  explicit TransportSelection(const Transport* forced) : forced_(forced) {}
  void checkForcedReachesOtherHosts() const;
  const Transport* forced_;
};

}  // namespace hetccl
