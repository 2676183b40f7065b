// The GPU engine: runs the plans of a heterogeneous communicator on a GPU
// rank. A launch enqueues all of its GPU work before it returns, as NCCL
// does: on the caller's stream it raises `inputsReady` and waits for
// `done`; on HetCCL's own stream, which waits for `inputsReady`, the
// calling thread enqueues the whole plan (the domain steps as
// vendor-library calls on the GPU buffers, the combining reductions as
// kernels, and each transfer across domains through a staged link whose
// pieces the stream and the staging proxy hand over through pinned rings,
// staged_link.h), then `done`. After that only the proxy works, on the
// network and host memory alone: no thread of HetCCL has to call into
// the GPU runtime for a launch to finish. (A runtime call can block for
// as long as the GPU is busy, for instance while another thread loads a
// module lazily; if finishing a launch needed one, that would never end.)
// Chunk c+1's GPU work runs while chunk c is on the wire, since the
// stream waits only for the pieces it is about to use.
//
// GPU ranks of one host, each its own domain, take the stream-driven
// shared-memory path (DeviceShmCollectives) for their sends and receives
// and for every collective but a reduction by a scalar in device memory.
//
// Launches can be captured in a CUDA graph, unless the rank's domain has
// several GPUs (its steps run in the vendor library), the timeline is on,
// or, through the proxy, the runtime is HIP (not run with graphs yet). A
// captured launch joins the engine's streams to the capture with events instead
// of `inputsReady` and `done`, and leaves its pieces in a script
// (staged_launch_script.h) that the proxy starts at every replay. From the
// first capture on, the pieces of the other launches wait until the engine's
// stream reaches their launch (StagingProxy's gate), so that a replay it
// reaches first is served first.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "algo/cross_domain_links.h"
#include "algo/plan_context.h"
#include "engine/gpu/gpu_engine_settings.h"
#include "engine/gpu/hostshm/call_agreement.h"
#include "engine/gpu/hostshm/device_shm_collectives.h"
#include "engine/gpu/hostshm/transfer_agreement.h"
#include "engine/gpu/plan/device_plan_data.h"
#include "engine/gpu/plan/launch_watch.h"
#include "engine/gpu/proxy/staged_launch_script.h"
#include "engine/gpu/proxy/staged_link.h"
#include "engine/gpu/proxy/staging_proxy.h"
#include "engine/gpu/stream_timeline.h"
#include "op/executor.h"
#include "util/peer_liveness.h"

namespace hetccl {

struct GpuPlanExecutorSetup {
  const DeviceModule& module;
  int device;  // made current before anything is created on it
  int rank;
  const DomainMap& domains;
  std::shared_ptr<CrossDomainLinks> links;
  std::shared_ptr<Executor> domainComm;  // NCCL or RCCL over the domain
  const PlanSettings& plans;
  const GpuEngineSettings& engine;
  double timeoutSeconds;  // a wait for a peer fails after it (0: never)
  std::shared_ptr<AbortSignal> abort;
  std::unique_ptr<DeviceShmCollectives> directCollectives;  // may be null
  // Which peer processes have exited (null: none is watched).
  std::shared_ptr<const PeerLiveness> liveness = nullptr;
  // How errors name each rank: "rank 1 (host b, pid 42)"; by rank.
  std::vector<std::string> rankNames = {};
};

class GpuPlanExecutor : public Executor {
 public:
  explicit GpuPlanExecutor(GpuPlanExecutorSetup setup);
  // Waits for the queued work (as NCCL's destroy does) and publishes this
  // rank's departure; after a failure, releases every stream wait instead.
  ~GpuPlanExecutor() override;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override;
  // Stops the domain's vendor library and lets every stream waiting on
  // the engine go on (with undefined results: the communicator failed).
  void abort() override;
  void releaseStreams() override { releaseWaits(); }
  void leaveAtExit() override;
  void finalize() override { domainComm_->finalize(); }
  // Also the error of another GPU rank of this host that failed (its
  // disagreement as it is, anything else as ncclRemoteError).
  ncclResult_t asyncError() const override;

 private:
  // Words the caller's stream and the engine signal each other with:
  // launch sequence numbers, only ever increasing.
  struct Flags {
    uint64_t inputsReady;  // written by the caller's stream
    uint64_t done;         // written by the engine's stream
    // Launches the engine's stream reached: the gate of the pieces posted
    // at enqueue (the callers' streams may be several, unordered).
    uint64_t engineReached;
    // Stream-driven launches the caller's stream reached and got past
    // (for the LaunchWatch).
    uint64_t directReached;
    uint64_t directPassed;
  };

  int openStagedLinks(const StagingPath& path);
  void warmUpDomain();
  void logTimeline();
  // Throws ncclInvalidUsage for a capture the launch does not allow.
  bool capturingAllowed(const std::vector<Op>& ops, StreamHandle stream) const;
  bool streamDriven(const std::vector<Op>& ops) const;
  void launchAmongHostGpus(const std::vector<Op>& ops, StreamHandle stream,
                           bool capturing);
  bool agreeOnCollective(const std::vector<Op>& ops);
  void enqueueAmongHostGpus(const std::vector<Op>& ops, StreamHandle stream,
                            bool capturing, bool agreed,
                            const LaneWaits& transferWaits);
  void enqueueLaunch(const std::vector<Op>& ops, StreamHandle stream,
                     bool capturing);
  // The engine's stream starts after the caller's reaches the launch, and
  // the caller's goes on once the engine's is past it.
  void followCaller(StreamHandle stream, bool capturing, uint64_t sequence);
  void releaseCaller(StreamHandle stream, bool capturing, uint64_t sequence);
  void numberPiecesPerLaunch();
  std::unique_ptr<StagedLaunchScript> startScript(bool capturing);
  // A launch, a link or a peer failed: the communicator reports the error
  // (and the other GPU ranks of this host learn of it), but every stream
  // stays where it is until abort, destroy or revoke releases it.
  void failed(const Error& error);
  // Raises the abort signal if another GPU rank of this host failed; true
  // if one did.
  bool noticePeersFailure() const;
  // Another GPU rank's failure as this rank reports it: a disagreement as
  // it is, anything else as a remote error naming the rank.
  std::optional<Error> peersFailure(const std::string& during) const;
  // What the stream-driven path's launch watch asks of the peers (see
  // LaunchWatch); `launch` 0 is between launches.
  void throwIfPeerLost(uint64_t launch) const;
  void recordDirectLaunch(uint64_t sequence, const std::vector<Op>& ops);
  // Whether launch `launch` needs `peer`, which left after completing
  // `collectivesCompleted` collective launches.
  bool needsDeparted(uint64_t launch, int peer,
                     uint64_t collectivesCompleted) const;
  std::string describeLaunch(uint64_t launch) const;
  bool launchesIdle() const;
  bool directLaunchesPassed() const;
  void releaseWaits();
  // Raises every host word the engine's streams may wait on.
  void raiseEngineWaits();
  void warnUnlessStreamsIdle() const;
  bool awaitStreamsIdle(double seconds) const;

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
  StagingStreams copies_;
  std::unique_ptr<StreamTimeline> timeline_;  // HETCCL_ENGINE_TIMELINE
  std::unique_ptr<TimedDomainSteps> timedDomainSteps_;
  DevicePlanData data_;
  // Before the proxy, whose failures release its waits.
  std::unique_ptr<DeviceShmCollectives> directCollectives_;
  // Destroyed after the links: a link that failed may write into a slot
  // until its transport stops.
  StagingRings rings_;
  // Destroyed after the proxy, which posts to them.
  std::shared_ptr<CrossDomainLinks> links_;
  StagingProxy proxy_;
  std::map<int, std::unique_ptr<StagedLink>> stagedLinks_;
  DeviceEvent callerReached_;
  DeviceEvent enginePassed_;
  PlanContext context_;
  mutable std::mutex launchMutex_;
  const bool scriptedLaunches_;  // HETCCL_SCRIPTED_LAUNCHES
  // Whether each launch numbers its pieces from 0 (staged_link.h); then
  // pieces posted at enqueue carry their launch's gate.
  bool perLaunch_ = false;
  uint64_t launchGate_ = 0;  // the gate of the pieces posted now (0: none)
  uint64_t launched_ = 0;
  std::atomic<uint64_t> directLaunched_{0};
  // What the watch needs to know of a stream-driven launch in flight.
  struct DirectLaunch {
    uint64_t sequence = 0;
    uint64_t collectiveIndex = 0;  // 0: only sends and receives
    uint64_t peers = 0;            // bit r: sends to or receives from r
    Op first;
    size_t ops = 0;
  };
  static constexpr size_t kDirectLaunchRecords = 64;
  mutable std::mutex directLaunchesMutex_;
  std::vector<DirectLaunch> directLaunches_ =
      std::vector<DirectLaunch>(kDirectLaunchRecords);
  uint64_t collectiveLaunches_ = 0;
  const std::shared_ptr<const PeerLiveness> liveness_;
  const std::vector<std::string> rankNames_;
  // With the stream-driven path: its calls are compared before they run.
  std::unique_ptr<CallAgreement> agreement_;
  std::unique_ptr<TransferAgreement> transferAgreement_;
  // With the stream-driven path; first to go.
  std::unique_ptr<LaunchWatch> directWatch_;
};

}  // namespace hetccl
