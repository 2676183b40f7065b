#include "transport/tcp/tcp_transport.h"

#include "transport/tcp/tcp_link_set.h"

namespace hetccl {
namespace {

class TcpTransport : public Transport {
 public:
  const char* name() const override { return "tcp"; }
  const char* description() const override {
    return "striped TCP sockets between ranks on any hosts";
  }
  bool reachesOtherHosts() const override { return true; }
  bool sharesHostMemory() const override { return false; }
  unsigned memoryKinds() const override { return kHostMemory; }
  int preference(bool) const override { return 10; }
  std::unique_ptr<LinkSet> connect(const TransportSetup& setup) const override {
    return std::make_unique<TcpLinkSet>(
        setup.oob, setup.peers,
        setup.settings.tcp.forHost(static_cast<size_t>(setup.hostSlot.ranks)),
        setup.setupTimeoutSeconds, setup.abort, setup.calls);
  }
};

}  // namespace

const Transport& tcpTransport() {
  static const TcpTransport transport;
  return transport;
}

}  // namespace hetccl
