#include "transport/net/net_transport.h"

#include "transport/net/net_devices.h"
#include "transport/net/net_library.h"
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
  // Between hosts, first wherever the plugin NCCL would load here
  // (HETCCL_NET_PLUGIN, NCCL_NET_PLUGIN, or libnccl-net.so on the loader's
  // path) loads and has a device that is not a plain socket: that is the
  // fabric the cluster's operators set up for NCCL and RCCL (EFA,
  // Slingshot, InfiniBand), ahead of UCX. A plugin of plain sockets only
  // is left to the tcp transport. Asking loads the plugin.
  int preference(bool sameHost) const override {
    if (sameHost) return 0;
    try {
      for (const hetcclNetDeviceInfo& device : netLibrary().devices())
        if (!isPlainSocket(device)) return preferenceAtBest();
    } catch (const Error&) {
    }
    return 0;
  }
  int preferenceAtBest() const override { return 30; }
  std::string loadedHere() const override {
    const NetLibrary* net = netLibraryIfLoaded();
    if (net == nullptr) return {};
    std::string devices;
    for (const hetcclNetDeviceInfo& device : net->devices())
      devices += format("%s%s (%d Mbps, %s)", devices.empty() ? "" : ", ",
                        device.name, device.speedMbps,
                        describePointerSupport(device.ptrSupport).c_str());
    return format("%s, devices %s", net->description().c_str(),
                  devices.c_str());
  }
  std::unique_ptr<LinkSet> connect(const TransportSetup& setup) const override {
    return std::make_unique<NetLinkSet>(
        setup.oob, setup.peers, setup.abort, setup.settings.net,
        setup.setupTimeoutSeconds, setup.calls, nullptr, setup.hostSlot,
        setup.gpuModule);
  }
};

}  // namespace

const Transport& netTransport() {
  static const NetTransport transport;
  return transport;
}

}  // namespace hetccl
