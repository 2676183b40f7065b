#include "domain/nccl/nccl_backend.h"

#include "domain/nccl/nccl_library.h"
#include "domain/nccl_api/nccl_api_comm.h"
#include "domain/process_library.h"
#include "runtime/gpu_runtimes.h"

namespace hetccl {
namespace {

class NcclBackend : public NcclApiBackend {
 public:
  const char* name() const override { return "NCCL"; }
  RuntimeKind runtime() const override { return RuntimeKind::Cuda; }
  std::shared_ptr<Executor> create(const DomainSetup& setup) const override {
    return std::make_shared<NcclApiComm>(
        setup.oob, name(),
        [this]() -> const NcclApiLibrary& { return nccl_.get(); }, setup.device,
        [](int device) {
          setCurrentDevice(gpuRuntime(RuntimeKind::Cuda), device);
        });
  }
  const NcclApiLibrary& library() const override { return nccl_.get(); }
  const NcclApiLibrary* loadedLibrary() const override {
    return nccl_.loaded();
  }

 private:
  mutable ProcessLibrary<NcclLibrary> nccl_;
};

}  // namespace

const NcclApiBackend& ncclBackend() {
  static const NcclBackend backend;
  return backend;
}

}  // namespace hetccl
