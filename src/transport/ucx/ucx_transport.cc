#include "transport/ucx/ucx_transport.h"

#include "transport/ucx/ucx_library.h"
#include "transport/ucx/ucx_link_set.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

class UcxTransport : public Transport {
 public:
  const char* name() const override { return "ucx"; }
  const char* description() const override {
    return "UCX tagged messages between ranks on any hosts (RDMA where UCX "
           "has it; libhetccl-ucx.so)";
  }
  bool reachesOtherHosts() const override { return true; }
  bool sharesHostMemory() const override { return false; }
  // Host memory everywhere; its links take GPU buffers too where UCX
  // reports their memory type (UcxLink::movesGpuMemory).
  unsigned memoryKinds() const override { return kHostMemory; }
  // Never on one host (shm is there); between hosts above tcp only where
  // UCX moves data by RDMA, else below it. Asking loads UCX.
  int preference(bool sameHost) const override {
    if (sameHost) return 0;
    try {
      const UcxLibrary& ucx = ucxLibrary();
      if (ucx.hasRdma()) return 20;
      LOG_INFO(kLogNet,
               "ucx transport: UCX %s has no RDMA transport here (%s); tcp "
               "is preferred between hosts",
               ucx.version().c_str(), ucx.transports().c_str());
      return 5;
    } catch (const Error& e) {
      LOG_INFO(kLogNet, "ucx transport not used: %s", e.what());
      return 0;
    }
  }
  std::unique_ptr<LinkSet> connect(const TransportSetup& setup) const override {
    return std::make_unique<UcxLinkSet>(setup.oob, setup.peers, setup.abort,
                                        setup.settings.ucx, setup.calls);
  }
};

}  // namespace

const Transport& ucxTransport() {
  static const UcxTransport transport;
  return transport;
}

}  // namespace hetccl
