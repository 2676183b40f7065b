// The communicator behind an ncclComm_t: its ranks, their domains, the
// vendor communicator that runs its operations, and its lifecycle (init,
// possibly in the background; split and shrink; finalize; abort).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "algo/domains.h"
#include "core/config.h"
#include "core/peer_info.h"
#include "core/registrations.h"
#include "core/settings.h"
#include "core/user_ops.h"
#include "core/wait_description.h"
#include "op/call_log.h"
#include "op/executor.h"
#include "op/op.h"
#include "runtime/gpu_device.h"
#include "runtime/runtime.h"
#include "util/abort_signal.h"
#include "util/error.h"
#include "util/oob.h"
#include "util/peer_liveness.h"

namespace hetccl {

class Bootstrap;
class CallProbe;
class PassThroughCallCheck;
class StallWatch;
class StatusFile;
class CrossDomainLinks;
class TransportChoice;
class Watchdog;

class Communicator {
 public:
  // `inherited`: for communicators made from a parent (split, shrink),
  // the domain label and host this rank had there. Reads the environment's
  // parameters; a bad one throws ncclInvalidArgument.
  Communicator(int rank, int nranks, CommConfig config,
               std::optional<Placement> inherited = std::nullopt);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // Connects to the peers through the bootstrap of `id` and sets up the
  // domains. Runs on this thread, or in the background when the config is
  // nonblocking; the outcome is then read with state().
  void initialize(const ncclUniqueId& id);
  void initializeInBackground(const ncclUniqueId& id);
  // From another thread: an init still under way stops waiting for its
  // peers and fails with `why` (ncclSystemError); one that is done is left
  // alone. For inits that wait for each other when one cannot start.
  void stopInit(const std::string& why);
  // Before init, for ncclCommInitAll: a GPU rank runs on device `ordinal`
  // of its runtime rather than on the one current when it was created.
  void bindToDevice(int ordinal) {
    if (gpu_) gpu_->ordinal = ordinal;
  }

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const CommConfig& config() const { return config_; }
  const Settings& settings() const { return settings_; }
  RuntimeKind runtimeKind() const {
    return gpu_ ? gpu_->runtime : RuntimeKind::Host;
  }
  // The runtime whose domain back-end runs this rank's domain.
  RuntimeKind domainRuntime() const {
    return gpu_ ? gpu_->domainRuntime() : RuntimeKind::Host;
  }
  // The GPU of a GPU rank (the device current when it was created).
  std::optional<GpuDevice> gpu() const { return gpu_; }
  Runtime& runtime() const;
  int domainCount() const { return domainCount_; }
  int domainIndex() const { return domainIndex_; }
  // Payload bytes this rank moved across domains (0 with one domain).
  size_t crossDomainBytesSent() const;
  size_t crossDomainBytesReceived() const;
  // Its hosts, domains and links, one line each (topology_map.h).
  std::vector<std::string> topology() const;
  // What runs this rank's domain: the vendor library's name, version and
  // file, or HetCCL's own back-end.
  const std::string& domainLibrary() const { return domainLibrary_; }
  // A GPU rank's: where its buffers go toward each other domain and why,
  // one line per domain; none for a CPU rank or a single domain.
  const std::vector<std::string>& gpuBuffers() const { return gpuBuffers_; }

  // ncclInProgress while initialising, ncclSuccess when usable, otherwise
  // the error that ended initialisation or that the communicator hit since.
  ncclResult_t state() const;
  std::string stateMessage() const;
  // state(), and an error the vendor library hit in the background
  // (ncclCommGetAsyncError).
  ncclResult_t asyncError() const;
  // Throws unless the communicator is initialised and has no error.
  void checkUsable() const;

  void checkStream(StreamHandle stream) const;
  // Numbers the calls made on this communicator, for the log.
  uint64_t nextOpCount() { return opCount_.fetch_add(1); }
  // Gives `op` its number (Op::sequence), in call order: the same on every
  // rank that takes part, if the ranks make the same calls.
  void numberCall(Op& op);
  // Enqueues one op or a group's ops for this communicator on `stream`,
  // after checking them against the other ranks' calls where
  // HETCCL_CHECK_CALLS asks for it (checksCalls()).
  void launch(const std::vector<Op>& ops, StreamHandle stream);
  // HETCCL_CHECK_CALLS's check of a pass-through communicator's launches
  // (PassThroughCallCheck), in two halves for a thread that drives several
  // communicators: it posts for all of them, verifies each (side by side),
  // then launches each unchecked. A disagreement throws ncclInvalidUsage
  // and leaves the communicator failed with it.
  bool checksCalls() const { return callCheck_ != nullptr; }
  void postCalls(const std::vector<Op>& ops);
  void verifyCalls(const std::vector<Op>& ops);
  void launchUnchecked(const std::vector<Op>& ops, StreamHandle stream);

  // The vendor library's own features when it runs all of this
  // communicator's work (one domain of GPUs), else null.
  LibraryFeatures* libraryFeatures() const;

  UserOps& userOps() { return userOps_; }
  Registrations& registrations() { return registrations_; }

  // The ranks of the new communicator (or nullptr for NCCL_SPLIT_NOCOLOR).
  // A non-empty `refusal` (this rank's arguments are bad) makes every
  // rank fail with ncclInvalidArgument, this one with the refusal, the
  // others naming it; the communicator stays usable and in step.
  std::unique_ptr<Communicator> split(int color, int key,
                                      const CommConfig& config,
                                      const std::string& refusal);
  std::unique_ptr<Communicator> shrink(const std::vector<int>& excluded,
                                       const CommConfig& config, bool abortOps);

  // Waits for the communicator's queued work to finish.
  void finalize();
  // Stops all work in flight (it ends with an error) and all waits.
  void abort();
  // Stops the work in flight but keeps the communicator for shrink.
  void revoke();
  // The process exits with this communicator alive (CommRegistry).
  void leaveAtExit();

 private:
  void connect(const ncclUniqueId& id);
  void warnIfInterfaceStaysOnHost() const;
  void setUpDomains();
  void setUpHeterogeneous(Oob& oob, const DomainMap& domains,
                          const std::vector<RankPlacement>& placements);
  void startCallProbe(const DomainMap& domains,
                      const std::shared_ptr<CrossDomainLinks>& links);
  void startStallWatch(const DomainMap& domains);
  std::shared_ptr<const WaitDescription> waitDescription(
      const DomainMap& domains,
      const std::shared_ptr<CrossDomainLinks>& links) const;
  // This rank's HETCCL_STATUS_DIR file; null when that is unset.
  std::unique_ptr<StatusFile> statusFile(
      std::shared_ptr<const WaitDescription> names) const;
  // Every rank is a GPU of this rank's runtime on this rank's host.
  bool everyRankIsALocalGpu() const;
  GpuEngineSettings engineSettingsForThisGpu() const;
  bool gpuSharedWithAnotherProcess() const;
  bool gpuSharedWithinProcess() const;
  void gatherDomainBackends(Oob& oob);
  void logTopology() const;
  // "rank 1 (host b, pid 42)", by rank, for errors that name a peer.
  std::vector<std::string> rankNames() const;
  Placement placement() const;
  std::shared_ptr<Executor> createDomainComm(Oob& oob, RuntimeKind runtime,
                                             const std::vector<int>& members);
  void setState(ncclResult_t state, const std::string& message);
  // Success, unless stopInit came first (it may come after the last wait).
  void markReady();
  // Inside a catch block of init: its error, or why it was stopped.
  Error initError() const;

  uint32_t nextTag() { return nextTag_++; }

  const int rank_;
  const int nranks_;
  const CommConfig config_;
  const Settings settings_;  // read once, when the communicator is made
  const std::optional<Placement> inherited_;
  std::optional<GpuDevice> gpu_;
  std::shared_ptr<AbortSignal> opsAbort_;  // ends waits of operations
  // This rank's collective calls, as launched, which the links compare a
  // peer's transfer with when no receive of this rank claims it.
  std::shared_ptr<CallLog> calls_;
  // Which peer processes exited. A loss only matters to work that waits
  // for that peer, so it ends those waits rather than every operation.
  std::shared_ptr<PeerLiveness> liveness_;
  // Where the operations' waits for a peer are marked (the plans' on their
  // links, the engine proxy's, the host domain's for its peers), for the
  // call probe, the stall reports and the status files.
  std::shared_ptr<WaitingCall> waiting_;
  std::atomic<bool> bootstrapAbort_{false};
  std::atomic<uint64_t> opCount_{0};
  uint64_t collectiveCalls_ = 0;
  std::vector<uint64_t> sendsTo_, receivesFrom_;  // by peer
  std::unique_ptr<Bootstrap> bootstrap_;
  std::vector<PeerInfo> peers_;
  // The same on every rank: the id's hash in hex, for status file names.
  std::string commName_;
  int domainCount_ = 1;
  int domainIndex_ = 0;
  // What topology() describes, kept from init.
  std::optional<DomainMap> domains_;
  std::vector<RuntimeKind> domainBackends_;  // by rank
  std::string domainLibrary_;                // domainLibrary()
  std::vector<std::string> gpuBuffers_;      // gpuBuffers()
  std::shared_ptr<const TransportChoice> transportChoice_;
  bool streamDriven_ = false;
  std::shared_ptr<Executor> executor_;
  std::unique_ptr<PassThroughCallCheck> callCheck_;  // HETCCL_CHECK_CALLS
  // With several domains; the executor owns them (and stops them first).
  std::weak_ptr<CrossDomainLinks> crossDomainLinks_;
  std::unique_ptr<Watchdog> watchdog_;
  // With several domains; it uses the bootstrap, so it goes first.
  std::unique_ptr<CallProbe> callProbe_;
  // With one domain, when it has something to report (core/stall_watch.h).
  std::unique_ptr<StallWatch> stallWatch_;
  UserOps userOps_;
  Registrations registrations_;
  uint32_t nextTag_ = 1;

  mutable std::mutex stateMutex_;
  ncclResult_t state_ = ncclInProgress;
  bool executorFinalized_ = false;
  std::string stateMessage_;
  std::string initStopped_;  // why stopInit stopped the init, if it did
  std::thread initThread_;
};

}  // namespace hetccl
