// What runs a communicator's operations on streams. Domain back-ends (the
// host collectives, NCCL, RCCL) run one domain's; the plan executors
// (engine/host for CPU ranks, engine/gpu for GPU ranks) run a whole
// communicator of several domains on top of them.
//
// Thread safety: launch() is called by one thread at a time per executor
// (the communicator's owner, or a group's launch); drain(), abort() and
// asyncError() may be called from any thread at any time, also while a
// launch runs; finalize() is called once, after drain() returned true.
#pragma once

#include <vector>

#include "op/library_features.h"
#include "op/op.h"
#include "runtime/runtime.h"

namespace hetccl {

class Executor {
 public:
  virtual ~Executor() = default;
  // Enqueues `ops` (one op, or a whole group, in call order) on `stream`.
  // Point-to-point ops of a group complete whatever order peers post them.
  virtual void launch(const std::vector<Op>& ops, StreamHandle stream) = 0;
  // Waits until no launched work is queued or running; false on timeout.
  virtual bool drain(double timeoutSeconds) = 0;
  // Stops work the vendor library itself runs (GPU kernels); HetCCL's own
  // work stops through the communicator's abort signal.
  virtual void abort() {}
  // Lets every stream that waits for this rank's enqueued work go on, with
  // undefined results (ncclCommRevoke). A failure alone never does that:
  // a GPU stream must not run past an operation that lost a peer.
  virtual void releaseStreams() {}
  // The process is exiting with the communicator alive: its streams must
  // not keep the exit waiting, and its peers must learn whether it left
  // after its last operation or in the middle of one.
  virtual void leaveAtExit() {}
  // Lets the vendor library finish and flush its own queued work
  // (ncclCommFinalize), after drain().
  virtual void finalize() {}
  // An error the vendor library hit in the background, or ncclSuccess.
  virtual ncclResult_t asyncError() const { return ncclSuccess; }
  // The vendor library's own features when this executor is a vendor
  // library's communicator, else null.
  virtual LibraryFeatures* libraryFeatures() { return nullptr; }
};

}  // namespace hetccl
