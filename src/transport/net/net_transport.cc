#include "transport/net/net_transport.h"

#include "transport/net/net_link_set.h"

namespace hetccl {
namespace {

class NetTransport : public Transport {
 public:
  const char* name() const override { return "net"; }
  const char* description() const override {
    return "an NCCL network plugin (libnccl-net*.so: EFA, Slingshot, IB "
           "through the plugin NCCL uses) between ranks on any hosts "
           "(libhetccl-net.so)";
  }
  bool reachesOtherHosts() const override { return true; }
  bool sharesHostMemory() const override { return false; }
  unsigned memoryKinds() const override { return kHostMemory; }
  // Only when HETCCL_TRANSPORT=net asks for it, for now: `auto` does not
  // weigh a plugin's devices against the other transports yet.
  int preference(bool) const override { return 0; }
  std::unique_ptr<LinkSet> connect(const TransportSetup& setup) const override {
    return std::make_unique<NetLinkSet>(setup.oob, setup.peers, setup.abort,
                                        setup.settings.net,
                                        setup.setupTimeoutSeconds, setup.calls);
  }
};

}  // namespace

const Transport& netTransport() {
  static const NetTransport transport;
  return transport;
}

}  // namespace hetccl
