// The NCCL vendor adaptor: a domain of NVIDIA GPU ranks runs its
// operations on a real NCCL communicator, call for call, on the caller's
// stream. This is the whole data path of a homogeneous NVIDIA
// communicator: no copies, no extra synchronisation, no extra launches.
#pragma once

#include <memory>

#include "util/oob.h"
#include "vendor/nccl/nccl_library.h"
#include "vendor/vendor_comm.h"

namespace hetccl {

class NcclComm : public VendorComm {
 public:
  // Collective over `oob`: rank 0 asks NCCL for a unique id, the oob
  // spreads it, and every rank joins NCCL's communicator on its current
  // device.
  NcclComm(Oob& oob, const NcclLibrary& nccl, int device);
  ~NcclComm() override;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  // NCCL orders its work on the caller's streams: nothing is queued here.
  bool drain(double timeoutSeconds) override { return true; }

  int device() const;
  void abort() override;

 private:
  void issue(const Op& op, StreamHandle stream);
  // Throws Error(result, what NCCL said) unless result is ncclSuccess.
  void check(ncclResult_t result, const char* call) const;

  const NcclLibrary& nccl_;
  ncclComm_t comm_ = nullptr;
};

// The process's NCCL, loaded on first use (a library handle is
// process-wide by nature); throws if there is none.
const NcclLibrary& processNccl();

// NCCL calls some of its own API functions through the dynamic linker.
// When the process has NCCL loaded in its global scope too (PyTorch loads
// it so), those calls can land in HetCCL's functions of the same name,
// which hand them back: this is the NCCL to hand back to when `caller` (a
// return address) is inside it, else null. Never loads NCCL.
const NcclApi* ncclCalling(const void* caller);

}  // namespace hetccl
