// The GPU engine: runs the plans of a heterogeneous communicator on a GPU
// rank. Every launch only enqueues. On the caller's stream it raises
// `inputsReady` and waits for `done`; HetCCL's own stream waits for
// `inputsReady`, and a planner thread enqueues the plan on it: the domain
// steps as vendor-library calls (NCCL, RCCL) on the GPU buffers, the
// combining reductions as kernels, and each transfer across domains
// through a staged link (copied to a pinned slot and sent by the proxy
// once the stream got there; received into a slot and copied in). The
// stream then raises `done`. The planner blocks only on data arriving from
// other domains, never on the GPU, so chunk c+1's domain step runs while
// chunk c is on the wire.
//
// GPU ranks of one host, each its own domain, take the stream-driven
// shared-memory path (DeviceShmCollectives) for the collectives it has.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "algo/cross_domain_links.h"
#include "algo/plan_context.h"
#include "engine/gpu/device_plan_data.h"
#include "engine/gpu/device_shm_collectives.h"
#include "engine/gpu/send_proxy.h"
#include "engine/gpu/staged_link.h"
#include "engine/gpu/staging_pool.h"
#include "runtime/host/host_stream.h"
#include "util/inflight_tracker.h"
#include "util/settings.h"
#include "vendor/executor.h"

namespace hetccl {

struct GpuPlanEngineSetup {
  const DeviceModule& module;
  int device;  // made current before anything is created on it
  int rank;
  const DomainMap& domains;
  std::shared_ptr<CrossDomainLinks> links;
  std::shared_ptr<Executor> domainComm;  // NCCL or RCCL over the domain
  const Settings& settings;
  std::shared_ptr<AbortSignal> abort;
  std::unique_ptr<DeviceShmCollectives> directCollectives;  // may be null
};

class GpuPlanEngine : public Executor {
 public:
  explicit GpuPlanEngine(GpuPlanEngineSetup setup);
  // Lets the planner finish what is queued (as NCCL's destroy waits for
  // queued work), releases every stream wait, and waits for the stream.
  ~GpuPlanEngine() override;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override;
  // Stops the domain's vendor library and lets every stream waiting on
  // the engine go on (with undefined results: the communicator failed).
  void abort() override;
  void finalize() override { domainComm_->finalize(); }
  ncclResult_t asyncError() const override { return domainComm_->asyncError(); }

 private:
  // Words the caller's stream and the engine signal each other with:
  // launch sequence numbers, only ever increasing.
  struct Flags {
    uint64_t inputsReady;  // written by the caller's stream
    uint64_t done;         // written by the engine's stream
  };

  void warmUpDomain();
  void checkNotCapturing(StreamHandle stream) const;
  void enqueueLaunch(const std::vector<Op>& ops, StreamHandle stream);
  void plan(uint64_t sequence, const std::vector<Op>& ops);
  void releaseWaits();

  const DeviceModule& module_;
  const int device_;
  const int rank_;
  const DomainMap domains_;
  std::shared_ptr<Executor> domainComm_;
  std::shared_ptr<AbortSignal> abort_;
  const double timeoutSeconds_;
  PinnedHostMemory flagMemory_;
  Flags* flags_;
  DeviceStream stream_;
  StreamProgress progress_;
  StagingPool pool_;
  DevicePlanData data_;
  // Destroyed before the pool, so no link is left holding a slot, and
  // after the proxy, which posts to them.
  std::shared_ptr<CrossDomainLinks> links_;
  SendProxy proxy_;
  std::map<int, std::unique_ptr<StagedLink>> stagedLinks_;
  PlanContext context_;
  std::unique_ptr<DeviceShmCollectives> directCollectives_;
  std::mutex launchMutex_;
  uint64_t launched_ = 0;
  InflightTracker planned_;  // launches the planner has not finished
  HostStream planner_;       // last: its thread stops before the rest goes
};

}  // namespace hetccl
