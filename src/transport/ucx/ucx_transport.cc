#include "transport/ucx/ucx_transport.h"

#include <optional>
#include <string>

#include "transport/ucx/ucx_library.h"
#include "transport/ucx/ucx_link_set.h"
#include "util/error.h"
#include "util/params.h"

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
      return ucxLibrary().hasRdma() ? preferenceAtBest() : 5;
    } catch (const Error&) {
      return 0;
    }
  }
  int preferenceAtBest() const override { return 20; }
  std::string missingBetweenHosts() const override {
    try {
      const UcxLibrary& ucx = ucxLibrary();
      return ucx.hasRdma() ? "" : noRdma(ucx);
    } catch (const Error& e) {
      return format(
          "%s; install UCX (its libucp) with the RDMA drivers (rdma-core, "
          "the NIC's verbs provider)",
          e.what());
    }
  }
  std::unique_ptr<LinkSet> connect(const TransportSetup& setup) const override {
    return std::make_unique<UcxLinkSet>(setup.oob, setup.peers, setup.abort,
                                        setup.settings.ucx, setup.calls);
  }

 private:
  // UCX_TLS may be what hides the RDMA transports, so it is named.
  static std::string noRdma(const UcxLibrary& ucx) {
    const std::optional<std::string> tls = environmentValue("UCX_TLS");
    return format(
        "UCX %s has no RDMA transport here (%s%stransports: %s); install "
        "the RDMA drivers (rdma-core, the NIC's verbs provider)%s",
        ucx.version().c_str(), tls ? ("UCX_TLS=" + *tls).c_str() : "",
        tls ? ", " : "", ucx.transports().c_str(),
        tls ? " and let UCX_TLS include rc, dc or ud" : "");
  }
};

}  // namespace

const Transport& ucxTransport() {
  static const UcxTransport transport;
  return transport;
}

}  // namespace hetccl
