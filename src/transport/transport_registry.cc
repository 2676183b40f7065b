#include "transport/transport_registry.h"

#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"
#include "util/error.h"

namespace hetccl {

const std::vector<const Transport*>& registeredTransports() {
  // One line per transport.
  static const std::vector<const Transport*> transports = {
      &shmTransport(),
      &tcpTransport(),
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

const Transport& TransportSelection::choose(bool sameHost) const {
  if (forced_ != nullptr) {
    if (!sameHost && !forced_->reachesOtherHosts())
      fail(ncclInvalidUsage,
           "HETCCL_TRANSPORT=%s, but %s links only ranks of one host and "
           "this communicator has ranks on several",
           forced_->name(), forced_->name());
    return *forced_;
  }
  const Transport* best = nullptr;
  for (const Transport* transport : registeredTransports()) {
    if (!sameHost && !transport->reachesOtherHosts()) continue;
    if (best == nullptr || transport->priority() > best->priority())
      best = transport;
  }
  if (best == nullptr)
    fail(ncclInvalidUsage, "no registered transport (%s) reaches another host",
         registeredTransportNames().c_str());
  return *best;
}

}  // namespace hetccl
