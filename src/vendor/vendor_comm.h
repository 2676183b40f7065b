// A vendor adaptor's communicator for the ranks of one domain. NCCL and RCCL
// adaptors wrap the vendor library; the host adaptor is HetCCL's own.
#pragma once

#include <vector>

#include "runtime/runtime.h"
#include "vendor/op.h"

namespace hetccl {

class VendorComm {
 public:
  virtual ~VendorComm() = default;
  // Enqueues `ops` (one op, or a whole group, in call order) on `stream`.
  // Point-to-point ops of a group complete whatever order peers post them.
  virtual void launch(const std::vector<Op>& ops, StreamHandle stream) = 0;
  // Waits until no launched work is queued or running; false on timeout.
  virtual bool drain(double timeoutSeconds) = 0;
  // Stops work the vendor library itself runs (GPU kernels); HetCCL's own
  // work stops through the communicator's abort signal.
  virtual void abort() {}
  // Lets the vendor library finish and flush its own queued work
  // (ncclCommFinalize), after drain().
  virtual void finalize() {}
  // An error the vendor library hit in the background, or ncclSuccess.
  virtual ncclResult_t asyncError() const { return ncclSuccess; }
};

}  // namespace hetccl
