// The domain of a GPU rank that is alone in it: every domain step is a
// copy or, for a reduction, the input scaled as asked (PreMulSum; the
// other ops of one input are the input), enqueued on the stream with the
// module's copy and reduction kernel. A one-rank communicator does no
// communication, and NCCL's one-rank path lacks some of its own
// reductions (fp8 PreMulSum fails there with invalid argument, where two
// ranks of NCCL reduce it). Only a PreMulSum whose scalar lives in device
// memory, which the kernel cannot take, goes to the vendor library.
#pragma once

#include <memory>
#include <vector>

#include "op/executor.h"
#include "runtime/device/device_module_loader.h"

namespace hetccl {

class SingleRankDomain : public Executor {
 public:
  SingleRankDomain(const DeviceModule& module, std::shared_ptr<Executor> vendor)
      : module_(module), vendor_(std::move(vendor)) {}

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override {
    return vendor_->drain(timeoutSeconds);
  }
  void abort() override { vendor_->abort(); }
  void finalize() override { vendor_->finalize(); }
  ncclResult_t asyncError() const override { return vendor_->asyncError(); }

 private:
  void run(const Op& op, StreamHandle stream) const;

  const DeviceModule& module_;
  std::shared_ptr<Executor> vendor_;
};

}  // namespace hetccl
