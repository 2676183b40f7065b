// The host collectives' domain communicator: HetCCL's own collectives for CPU
// ranks, run on host streams over the shared-memory world of their host.
// Where cores are to spare (HETCCL_HOST_THREADS), helper threads share each
// rank's large copies and reductions, and the staging rounds grow with
// them so that each thread's part is worth its hand-off.
#pragma once

#include <functional>
#include <memory>

#include "domain/host/host_collectives.h"
#include "domain/host/shm_world.h"
#include "op/executor.h"
#include "runtime/host/memory_workers.h"
#include "util/inflight_tracker.h"
#include "util/peer_liveness.h"

namespace hetccl {

class HostComm : public Executor,
                 public std::enable_shared_from_this<HostComm> {
 public:
  // Collective over `oob`: every rank of the domain constructs its HostComm
  // at the same time. `abort` ends every wait of this communicator and is
  // raised by any failed operation, since a failed collective leaves the
  // ranks out of step; a wait for a peer ends after `timeoutSeconds` (0:
  // never); `liveness` ends the waits for peers that exited; `marks` say
  // where waits for peers are marked, naming the communicator's ranks.
  static std::shared_ptr<HostComm> create(
      Oob& oob, const ShmSettings& settings, double timeoutSeconds,
      std::shared_ptr<AbortSignal> abort,
      std::shared_ptr<const PeerLiveness> liveness, WaitMarks marks = {});

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override;
  // Compares the calls the peers published with this rank's (a rank whose
  // operation waited for no peer learns only here that they disagree).
  ncclResult_t asyncError() const override;
  // Work its waits for peers do between their looks (ShmWorld::
  // setWhileWaiting). Before the first operation.
  void setWhileWaiting(std::function<void()> work) {
    world_.setWhileWaiting(std::move(work));
  }

 private:
  HostComm(Oob& oob, const ShmSettings& settings, double timeoutSeconds,
           std::shared_ptr<AbortSignal> abort,
           std::shared_ptr<const PeerLiveness> liveness, WaitMarks marks);
  void execute(const std::vector<Op>& ops);

  MemoryWorkers workers_;  // before world_: its threads size the staging
  ShmWorld world_;
  HostCollectives engine_;
  InflightTracker inflight_;
};

}  // namespace hetccl
