// Domain back-ends: what runs the collectives of one domain's ranks. The
// host collectives run CPU ranks; NCCL runs NVIDIA GPUs; RCCL runs AMD GPUs. A
// back-end is chosen from one table keyed by the ranks' runtime.
//
// Adding a back-end: a folder under src/domain/ with an Executor and a
// `const DomainBackend& fooBackend()`, and its line in domain_backend.cc.
#pragma once

#include <memory>
#include <vector>

#include "op/executor.h"
#include "runtime/runtime.h"
#include "util/abort_signal.h"
#include "util/oob.h"
#include "util/peer_liveness.h"
#include "util/settings.h"

namespace hetccl {

// What create() gets: the domain's ranks (`oob` spans exactly them), this
// rank's device ordinal (GPU back-ends), the communicator's settings, its
// abort signal (raised by any failed operation) and the liveness of the
// domain's peers.
struct DomainSetup {
  Oob& oob;
  const Settings& settings;
  int device;
  std::shared_ptr<AbortSignal> abort;
  std::shared_ptr<const PeerLiveness> liveness;
};

class DomainBackend {
 public:
  virtual ~DomainBackend() = default;
  // "host collectives", "NCCL", "RCCL": for logs and hetccl-info.
  virtual const char* name() const = 0;
  virtual RuntimeKind runtime() const = 0;
  // Collective over setup.oob: the domain's communicator on this rank.
  virtual std::shared_ptr<Executor> create(const DomainSetup& setup) const = 0;
};

// The back-end of domains of `runtime`'s ranks.
const DomainBackend& domainBackendFor(RuntimeKind runtime);
// Every back-end, for hetccl-info and the hand-back of library calls.
const std::vector<const DomainBackend*>& registeredDomainBackends();

}  // namespace hetccl
