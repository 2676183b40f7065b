// The one place that chooses how a GPU rank of a communicator with several
// domains runs its operations: GPU ranks of one runtime on one host, each
// its own domain and few enough for one reduction launch, meet in pinned
// outboxes that their streams read directly (StreamDrivenExecutor); every
// other GPU rank runs the plans over staged links (GpuPlanExecutor).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/gpu/plan/gpu_plan_executor.h"
#include "util/oob.h"

namespace hetccl {

struct GpuExecutorSetup {
  GpuPlanExecutorSetup plans;
  // The communicator's ranks (collective: every rank chooses at once).
  Oob& oob;
  // HETCCL_TRANSPORT (TransportSettings::selection): whether the links
  // between ranks of one host share memory.
  const std::string& transport;
  // Every rank is a GPU of this rank's runtime on this rank's host.
  bool everyRankIsALocalGpu;
  // Which peer processes have exited (null: none is watched).
  std::shared_ptr<const PeerLiveness> liveness;
  // How errors name each rank: "rank 1 (host b, pid 42)"; by rank.
  std::vector<std::string> rankNames;
  // HETCCL_STALL_WARN (0: never).
  double stallWarnSeconds = 0;
  // How long a step of the set-up waits for a peer (the bootstrap's
  // timeout; 0: forever).
  double setUpTimeoutSeconds = 0;
};

struct GpuExecutor {
  std::shared_ptr<Executor> executor;
  bool streamDriven;  // for the topology map
  // Where its buffers go toward each other domain, one line per domain
  // (GpuPlanExecutor::gpuBufferPaths), for hetcclCommGpuBuffers.
  std::vector<std::string> gpuBuffers;
};

// Collective over setup.oob; the same choice on every rank.
GpuExecutor createGpuExecutor(GpuExecutorSetup setup);

}  // namespace hetccl
