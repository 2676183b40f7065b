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
// GPU ranks of one host, each its own domain, run on the stream-driven
// executor instead (engine/gpu/stream_driven_executor.h), which hands this
// executor only the collectives its outboxes do not run.
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
//
// In a domain of several GPUs the stream writes into a host word as it
// enters and leaves each domain step (DomainStepLog): a stall inside the
// domain (a peer of the domain stopped, the vendor library waiting for
// it) is then reported as that step, not as the staged pieces behind it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "algo/cross_domain_links.h"
#include "algo/plan_context.h"
#include "engine/engine_step.h"
#include "engine/gpu/gpu_engine_settings.h"
#include "engine/gpu/plan/device_plan_data.h"
#include "engine/gpu/proxy/staged_launch_script.h"
#include "engine/gpu/proxy/staged_link.h"
#include "engine/gpu/proxy/staging_proxy.h"
#include "engine/gpu/stream_timeline.h"
#include "op/executor.h"

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
  // Who else must hear of a failure (null: nobody), on any thread.
  std::function<void(const Error&)> onFailure = nullptr;
  // The domain's back-end marks its own waits (DomainBackend::marksWaits):
  // the proxy then leaves a wait inside the domain to it.
  bool domainMarksWaits = false;
};

class GpuPlanExecutor : public Executor, public StepTimedEngine {
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
  ncclResult_t asyncError() const override { return domainComm_->asyncError(); }

  // Whether `stream` is being captured into a CUDA graph, and if so, that
  // a launch of `ops` can be; throws ncclInvalidUsage where it cannot.
  bool capturingAllowed(const std::vector<Op>& ops, StreamHandle stream) const;
  // Every launch's work has passed the caller's stream.
  bool launchesIdle() const;
  // Where its buffers go toward each other domain and why, one line per
  // domain: "domain 1: tcp, staged through host memory (...)".
  std::vector<std::string> gpuBufferPaths() const;
  // The host memory its staging rings pinned so far (the launching
  // thread's, which pins them).
  size_t stagingPinnedBytes() { return rings_.pinnedBytes(); }

  // Each all-reduce launched on a stream of its own and the stream polled:
  // the hop as a user's small collective pays it (its link, its staging
  // or not, its streams and proxy). On a failure or past
  // `timeoutSeconds` the streams are released before it throws.
  double timeOneElementAllReduceUs(int rounds, double timeoutSeconds) override;
  void retune(const PlanSettings& plans) override;

 private:
  // Words the caller's stream and the engine signal each other with:
  // launch sequence numbers, only ever increasing.
  struct Flags {
    uint64_t inputsReady;  // written by the caller's stream
    uint64_t done;         // written by the engine's stream
    // Launches the engine's stream reached: the gate of the pieces posted
    // at enqueue (the callers' streams may be several, unordered).
    uint64_t engineReached;
  };

  int openStagedLinks(const StagingPath& path);
  void warnOfNeedlessStaging(MemoryKind memory) const;
  void warmUpDomain();
  // Waits for `stream` as a host thread, at most `timeoutSeconds` (0: no
  // limit); on a failure or past it, releases every stream wait and throws.
  void awaitStream(StreamHandle stream, double timeoutSeconds,
                   const char* what);
  void logTimeline();
  void enqueueLaunch(const std::vector<Op>& ops, StreamHandle stream,
                     bool capturing);
  // The engine's stream starts after the caller's reaches the launch, and
  // the caller's goes on once the engine's is past it.
  void followCaller(StreamHandle stream, bool capturing, uint64_t sequence);
  void releaseCaller(StreamHandle stream, bool capturing, uint64_t sequence);
  void numberPiecesPerLaunch();
  std::unique_ptr<StagedLaunchScript> startScript();
  // A launch, a link or a peer failed: the communicator reports the error
  // (and onFailure learns of it), but every stream stays where it is until
  // abort, destroy or revoke releases it.
  void failed(const Error& error);
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
  std::unique_ptr<LoggedDomainSteps> loggedDomainSteps_;
  DevicePlanData data_;
  const std::function<void(const Error&)> onFailure_;
  // Destroyed after the links: a link that failed may write into a slot
  // until its transport stops.
  StagingRings rings_;
  // Destroyed after the proxy, which posts to them.
  std::shared_ptr<CrossDomainLinks> links_;
  // Null in a domain of one GPU. Read by the proxy.
  const std::unique_ptr<DomainStepLog> domainSteps_;
  StagingProxy proxy_;
  std::map<int, std::unique_ptr<StagedLink>> stagedLinks_;
  MemoryKind deviceMemory_;          // its GPU's (host for an emulated one)
  UnchangedInputs unchangedInputs_;  // of the plan being enqueued
  DeviceEvent callerReached_;
  DeviceEvent enginePassed_;
  PlanContext context_;
  // The plans' choices, once per kind and size (made once the links are).
  std::unique_ptr<DecisionLog> decisions_;
  mutable std::mutex launchMutex_;
  // Whether each launch numbers its pieces from 0 (staged_link.h); then
  // pieces posted at enqueue carry their launch's gate.
  bool perLaunch_ = false;
  uint64_t launchGate_ = 0;  // the gate of the pieces posted now (0: none)
  uint64_t launched_ = 0;
};

}  // namespace hetccl
