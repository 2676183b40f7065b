#include "domain/rccl/rccl_backend.h"

#include "domain/nccl_api/nccl_api_comm.h"
#include "domain/process_library.h"
#include "domain/rccl/rccl_library.h"
#include "runtime/gpu_runtimes.h"

namespace hetccl {
namespace {

// RCCL exports NCCL's API, so an AMD domain is the same NcclApiComm over
// RCCL's table, with the HIP device made current.
class RcclBackend : public NcclApiBackend {
 public:
  const char* name() const override { return "RCCL"; }
  RuntimeKind runtime() const override { return RuntimeKind::Hip; }
  std::shared_ptr<Executor> create(const DomainSetup& setup) const override {
    return std::make_shared<NcclApiComm>(
        setup.oob, name(),
        [this]() -> const NcclApiLibrary& { return rccl_.get(); }, setup.device,
        [](int device) {
          setCurrentDevice(gpuRuntime(RuntimeKind::Hip), device);
        });
  }
  const NcclApiLibrary& library() const override { return rccl_.get(); }
  const NcclApiLibrary* loadedLibrary() const override {
    return rccl_.loaded();
  }

 private:
  mutable ProcessLibrary<RcclLibrary> rccl_;
};

}  // namespace

const NcclApiBackend& rcclBackend() {
  static const RcclBackend backend;
  return backend;
}

}  // namespace hetccl
