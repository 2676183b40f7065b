#include "domain/host/host_backend.h"

#include "domain/host/host_comm.h"

namespace hetccl {
namespace {

class HostBackend : public DomainBackend {
 public:
  const char* name() const override { return "host collectives"; }
  RuntimeKind runtime() const override { return RuntimeKind::Host; }
  bool marksWaits() const override { return true; }
  std::shared_ptr<Executor> create(const DomainSetup& setup) const override {
    return HostComm::create(setup.oob, setup.settings.host,
                            setup.timeoutSeconds, setup.abort, setup.liveness,
                            WaitMarks{setup.waiting, setup.globalRanks});
  }
};

}  // namespace

const DomainBackend& hostBackend() {
  static const HostBackend backend;
  return backend;
}

}  // namespace hetccl
