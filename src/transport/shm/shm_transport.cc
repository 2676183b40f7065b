#include "transport/shm/shm_transport.h"

#include "transport/shm/shm_link_set.h"

namespace hetccl {
namespace {

class ShmTransport : public Transport {
 public:
  const char* name() const override { return "shm"; }
  const char* description() const override {
    return "shared memory between ranks of one host";
  }
  bool reachesOtherHosts() const override { return false; }
  bool sharesHostMemory() const override { return true; }
  unsigned memoryKinds() const override { return kHostMemory; }
  int preference(bool sameHost) const override { return sameHost ? 100 : 0; }
  std::unique_ptr<LinkSet> connect(const TransportSetup& setup) const override {
    return std::make_unique<ShmLinkSet>(
        setup.oob, setup.peers, setup.settings.shm, setup.abort, setup.liveness,
        setup.calls, setup.hostSlot.ranks);
  }
};

}  // namespace

const Transport& shmTransport() {
  static const ShmTransport transport;
  return transport;
}

}  // namespace hetccl
