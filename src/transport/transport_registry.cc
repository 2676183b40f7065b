#include "transport/transport_registry.h"

#include <algorithm>

#include "transport/net/net_transport.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/ucx/ucx_transport.h"
#include "util/error.h"

namespace hetccl {

const std::vector<const Transport*>& registeredTransports() {
  // One line per transport.
  static const std::vector<const Transport*> transports = {
      &shmTransport(),
      &tcpTransport(),
      &ucxTransport(),
      &netTransport(),
  };
  return transports;
}

std::string registeredTransportNames() {
  std::string names;
  for (const Transport* transport : registeredTransports())
    names += (names.empty() ? "" : ", ") + std::string(transport->name());
  return names;
}

TransportSelection TransportSelection::parse(const std::string& value) {
  if (value.empty() || value == "auto") return TransportSelection(nullptr);
  for (const Transport* transport : registeredTransports())
    if (value == transport->name()) return TransportSelection(transport);
  fail(ncclInvalidArgument,
       "HETCCL_TRANSPORT=\"%s\": expected auto or one of the transports of "
       "this build (%s)",
       value.c_str(), registeredTransportNames().c_str());
}

const Transport& TransportSelection::onOneHost() const {
  if (forced_ != nullptr) return *forced_;
  const Transport* best = nullptr;
  for (const Transport* transport : registeredTransports())
    if (best == nullptr || transport->preference(true) > best->preference(true))
      best = transport;
  return *best;
}

std::vector<uint8_t> TransportSelection::preferencesBetweenHosts() const {
  std::vector<uint8_t> preferences;
  for (const Transport* transport : registeredTransports())
    preferences.push_back(
        static_cast<uint8_t>(std::clamp(transport->preference(false), 0, 255)));
  return preferences;
}

void TransportSelection::checkForcedReachesOtherHosts() const {
  if (!forced_->reachesOtherHosts())
    fail(ncclInvalidUsage,
         "HETCCL_TRANSPORT=%s, but %s links only ranks of one host and "
         "this communicator has ranks on several",
         forced_->name(), forced_->name());
}

const Transport& TransportSelection::betweenHosts(
    const std::vector<uint8_t>& mine,
    const std::vector<uint8_t>& theirs) const {
  if (forced_ != nullptr) {
    checkForcedReachesOtherHosts();
    return *forced_;
  }
  const auto& transports = registeredTransports();
  const Transport* best = nullptr;
  int bestWanted = 0;
  for (size_t i = 0; i < transports.size(); ++i) {
    if (!transports[i]->reachesOtherHosts() || i >= mine.size() ||
        i >= theirs.size())
      continue;
    int wanted = std::min(mine[i], theirs[i]);
    if (wanted > bestWanted) {
      best = transports[i];
      bestWanted = wanted;
    }
  }
  if (best == nullptr)
    fail(ncclInvalidUsage,
         "no registered transport (%s) can link these two hosts",
         registeredTransportNames().c_str());
  return *best;
}

}  // namespace hetccl
