// One operation on a simulated cluster: every rank runs HetCCL's own plan
// (runPlans, src/algo) for it against simulated links, domain libraries
// and memory, in virtual time; what it took comes back.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "algo/plan_tuning.h"
#include "cluster.h"
#include "nccl.h"
#include "op/op.h"

namespace hetccl::sim {

// The operation, sized as nccl-tests and hetccl-perf size it: `bytes` is
// the larger of a rank's two buffers (the gathered output of an
// all-gather, the input of a reduce-scatter, the whole of an all-to-all).
// SendRecv: each rank sends `bytes` to the next rank and receives as much
// from the previous one (a ring).
enum class SimCollective {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AlltoAll,
  SendRecv
};

struct OpSpec {
  SimCollective collective = SimCollective::AllReduce;
  size_t bytes = 0;
  ncclDataType_t dtype = ncclFloat32;
  int root = 0;
};

// The plans' settings (HETCCL_CHUNK, HETCCL_ONE_SHOT_MAX).
struct PlanKnobs {
  size_t chunkBytes = size_t{16} << 20;
  size_t oneShotMaxBytes = size_t{32} << 10;
  // Where set, the cut-off and chunk by collective and size instead of the
  // two above, as a communicator chooses them (algo/plan_tuning.h).
  std::shared_ptr<const PlanTuning> tuning;
};

// The cost model's view of `cluster` (algo/plan_cost.h): its domains and
// libraries as given, the engines' costs of their runtimes; as the link,
// the rate a rank gets of its host's NICs (of the pretend hosts' loopback,
// half of it each way) and the NICs' latency, and as each further
// transfer's cost the proxy's hand-over per piece.
CostLayout modelLayoutOf(const ClusterSpec& cluster);
LinkCost modelLinkOf(const ClusterSpec& cluster);

struct SimResult {
  double seconds = 0;
  double algGBps = 0;
  double busGBps = 0;      // nccl-tests' bus bandwidth of the collective
  size_t messagesMax = 0;  // transfers a rank sent across, at most
  double messagesMean = 0;
  size_t scratchMax = 0;  // scratch a rank's plan asked for, at most
  size_t pinnedMax = 0;   // pinned staging a GPU rank's links took, at most
  // Ranks of other domains a rank sent to or received from, at most.
  size_t peersMax = 0;
  std::string busiest;            // the network resource busy longest
  double busiestUtilization = 0;  // its busy time / the operation's time
  size_t busiestBytes = 0;
  double idealSeconds = 0;   // the cluster's least time for it (ideal.h)
  double domainSeconds = 0;  // the busiest domain library's time
  double memorySeconds = 0;  // the busiest rank's reductions and copies
};

const char* collectiveName(SimCollective collective);
// "allreduce", "allgather", ... as hetccl-perf's -x names them; false
// for an unknown name.
bool parseCollective(const std::string& name, SimCollective* collective);
// nccl-tests' bus bandwidth factor for `ranks` ranks.
double busFactor(SimCollective collective, int ranks);

SimResult simulate(const ClusterSpec& cluster, const OpSpec& op,
                   const PlanKnobs& knobs);

}  // namespace hetccl::sim
