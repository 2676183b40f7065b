#include "transport/transport_settings.h"

#include "transport/transport_registry.h"

namespace hetccl {

TransportSettings TransportSettings::fromEnvironment() {
  TransportSettings s;
  s.selection = readString(kTransport).value_or("");
  TransportSelection::parse(s.selection);
  s.shm = ShmLinkSettings::fromEnvironment();
  s.tcp = TcpSettings::fromEnvironment();
  s.ucx = UcxSettings::fromEnvironment();
  s.net = NetSettings::fromEnvironment();
  return s;
}

}  // namespace hetccl
