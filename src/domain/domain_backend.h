// Domain back-ends: what runs the collectives of one domain's ranks. The
// host collectives run CPU ranks; NCCL runs NVIDIA GPUs; RCCL runs AMD GPUs. A
// back-end is chosen from one table keyed by the ranks' runtime.
//
// Adding a back-end: a folder under src/domain/ with an Executor and a
// `const DomainBackend& fooBackend()`, and its line in domain_backend.cc;
// if it has parameters, its foo_params.def and their line in
// core/all_params.cc, and its settings' slice in BackendSettings if they
// are per communicator.
#pragma once

#include <memory>
#include <vector>

#include "domain/host/shm_settings.h"
#include "op/executor.h"
#include "op/waiting_call.h"
#include "runtime/runtime.h"
#include "util/abort_signal.h"
#include "util/oob.h"
#include "util/peer_liveness.h"

namespace hetccl {

// The back-ends' settings that a communicator reads when it is created:
// each back-end's slice (NCCL's and RCCL's parameters say where their
// libraries are, and are read where those load).
struct BackendSettings {
  ShmSettings host;

  // Throws ncclInvalidArgument for the first bad value.
  static BackendSettings fromEnvironment();
};

// What create() gets: the domain's ranks (`oob` spans exactly them), the
// back-ends' settings (each takes its own slice), how long an operation
// may wait for a peer (HETCCL_TIMEOUT; 0: forever), this rank's device
// ordinal (GPU back-ends), the communicator's abort signal (raised by any
// failed operation), the liveness of the domain's peers, where a wait for
// a peer is marked for the stall reports and status files (may be null:
// unmarked) and the communicator's rank of each of the domain's ranks
// (empty: the same as in the domain), which a marked wait names.
struct DomainSetup {
  Oob& oob;
  const BackendSettings& settings;
  double timeoutSeconds;
  int device;
  std::shared_ptr<AbortSignal> abort;
  std::shared_ptr<const PeerLiveness> liveness;
  std::shared_ptr<WaitingCall> waiting = nullptr;
  std::vector<int> globalRanks = {};
};

class DomainBackend {
 public:
  virtual ~DomainBackend() = default;
  // "host collectives", "NCCL", "RCCL": for logs and hetccl-info.
  virtual const char* name() const = 0;
  virtual RuntimeKind runtime() const = 0;
  // Whether its waits for the domain's peers mark DomainSetup::waiting
  // (the host collectives'); a GPU back-end's wait on its stream does not.
  virtual bool marksWaits() const { return false; }
  // Collective over setup.oob: the domain's communicator on this rank.
  virtual std::shared_ptr<Executor> create(const DomainSetup& setup) const = 0;
};

// The back-end of domains of `runtime`'s ranks.
const DomainBackend& domainBackendFor(RuntimeKind runtime);
// Every back-end, for hetccl-info and the hand-back of library calls.
const std::vector<const DomainBackend*>& registeredDomainBackends();

}  // namespace hetccl
