// The executor of a GPU rank whose communicator is GPUs of one host, each
// its own domain, meeting in pinned outboxes (hostshm/): sends, receives
// and every collective DeviceShmCollectives handles are enqueued on the
// caller's stream with no HetCCL thread on the data path. The few
// collectives it does not handle (a reduction by a scalar in device
// memory) go to the plan executor it owns, over staged links.
//
// Before anything is enqueued, calls are compared through the outboxes
// (CallAgreement, TransferAgreement): calls that disagree enqueue nothing.
// A LaunchWatch times the launches, whose streams wait only for their
// peers' streams. A failure here or in the plan executor is posted in the
// outboxes, so the host's other GPU ranks fail too instead of waiting.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/gpu/hostshm/call_agreement.h"
#include "engine/gpu/hostshm/device_shm_collectives.h"
#include "engine/gpu/hostshm/launch_watch.h"
#include "engine/gpu/hostshm/transfer_agreement.h"
#include "engine/gpu/plan/gpu_plan_executor.h"
#include "op/decision_log.h"
#include "op/executor.h"
#include "util/peer_liveness.h"

namespace hetccl {

struct StreamDrivenSetup {
  const DeviceModule& module;
  int device;
  int rank;
  int nranks;
  double timeoutSeconds;  // HETCCL_TIMEOUT; 0: forever
  std::shared_ptr<AbortSignal> abort;
  std::unique_ptr<DeviceShmCollectives> collectives;
  // Which peer processes have exited (null: none is watched).
  std::shared_ptr<const PeerLiveness> liveness;
  // How errors name each rank: "rank 1 (host b, pid 42)"; by rank.
  std::vector<std::string> rankNames;
  // HETCCL_STALL_WARN: a launch that waits this long is said (0: never).
  double stallWarnSeconds = 0;
};

class StreamDrivenExecutor : public Executor {
 public:
  // `plans` runs what the outboxes do not; it must report its failures to
  // outboxesFailure(collectives), which the caller wires up at its
  // construction (GpuPlanExecutorSetup::onFailure).
  StreamDrivenExecutor(StreamDrivenSetup setup,
                       std::unique_ptr<GpuPlanExecutor> plans);
  // Publishes this rank's departure after a clean finish; after a failure,
  // releases every stream wait instead.
  ~StreamDrivenExecutor() override;

  // What the plan executor calls when it fails: the host's other GPU
  // ranks learn of it through `collectives`' outboxes.
  static std::function<void(const Error&)> outboxesFailure(
      DeviceShmCollectives& collectives);

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override;
  void abort() override;
  void releaseStreams() override;
  void leaveAtExit() override;
  void finalize() override { plans_->finalize(); }
  // Also the error of another GPU rank of this host that failed (its
  // disagreement as it is, anything else as ncclRemoteError).
  ncclResult_t asyncError() const override;

 private:
  // What the watch needs to know of a launch in flight.
  struct LaunchRecord {
    uint64_t sequence = 0;
    uint64_t collectiveIndex = 0;  // 0: only sends and receives
    uint64_t peers = 0;            // bit r: sends to or receives from r
    uint64_t call = 0;  // its collective's number (Op::sequence); 0: none
    Op first;
    size_t ops = 0;
  };
  // Words the caller's streams write: the launches they reached and got
  // past (launch sequence numbers, only ever increasing).
  struct Marks {
    uint64_t reached;
    uint64_t passed;
  };

  // Whether the outboxes run `collectives` (none counts as yes).
  bool handled(const std::vector<Op>& collectives) const;
  bool capturingAllowed(const std::vector<Op>& collectives,
                        StreamHandle stream) const;
  void launchMarked(const std::vector<Op>& ops, StreamHandle stream,
                    bool capturing);
  bool agreeOnCollective(const std::vector<Op>& collectives);
  void enqueue(const std::vector<Op>& ops, StreamHandle stream, bool capturing,
               bool agreed, const LaneWaits& transferWaits);
  void launchStaged(const std::vector<Op>& collectives, StreamHandle stream);
  // A launch failed: the communicator reports the error and the host's
  // other GPU ranks learn of it, but every stream stays where it is until
  // abort, destroy or revoke releases it.
  void failed(const Error& error);
  // Raises the abort signal if another GPU rank of this host failed; true
  // if one did.
  bool noticePeersFailure() const;
  // Another GPU rank's failure as this rank reports it: a disagreement as
  // it is, anything else as a remote error naming the rank.
  std::optional<Error> peersFailure(const std::string& during) const;
  // What the launch watch asks of the peers (LaunchWatch); `launch` 0 is
  // between launches.
  void throwIfPeerLost(uint64_t launch) const;
  void record(uint64_t sequence, const std::vector<Op>& ops);
  // Whether launch `launch` needs `peer`, which left after completing
  // `collectivesCompleted` collective launches.
  bool needsDeparted(uint64_t launch, int peer,
                     uint64_t collectivesCompleted) const;
  std::string describeLaunch(uint64_t launch) const;
  // For the stall line: the ranks launch `launch` may wait for.
  std::string ranksBehind(uint64_t launch) const;
  // The callers' streams run this path's work themselves: they must be
  // past it before the outboxes go.
  bool launchesPassed() const;
  void awaitLaunchesPassed() const;
  bool idle() const;
  void releaseWaits();

  const DeviceModule& module_;
  const int device_;
  const int rank_;
  const int nranks_;
  std::shared_ptr<AbortSignal> abort_;
  PinnedHostMemory markMemory_;
  Marks* marks_;
  // Outlives the plan executor, which reports its failures to it.
  std::unique_ptr<DeviceShmCollectives> collectives_;
  std::unique_ptr<GpuPlanExecutor> plans_;
  CallAgreement agreement_;
  TransferAgreement transferAgreement_;
  mutable std::mutex launchMutex_;
  std::atomic<uint64_t> launched_{0};
  bool stagedLaunchFailed_ = false;  // the plan executor reported it
  static constexpr size_t kLaunchRecords = 64;
  mutable std::mutex recordsMutex_;
  std::vector<LaunchRecord> records_ =
      std::vector<LaunchRecord>(kLaunchRecords);
  uint64_t collectiveLaunches_ = 0;
  // Which path each kind and size of collective took, once.
  DecisionLog decisions_;
  const std::shared_ptr<const PeerLiveness> liveness_;
  const std::vector<std::string> rankNames_;
  // First to go: its thread calls into the members above.
  std::unique_ptr<LaunchWatch> watch_;
};

}  // namespace hetccl
