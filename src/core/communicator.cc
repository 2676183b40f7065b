#include "core/communicator.h"

#include <algorithm>
#include <cstring>

#include "algo/cross_domain_links.h"
#include "algo/tuned_plans.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/root.h"
#include "core/call_probe.h"
#include "core/pass_through_call_check.h"
#include "core/stall_watch.h"
#include "core/subset_oob.h"
#include "core/topology_map.h"
#include "core/watchdog.h"
#include "domain/domain_backend.h"
#include "engine/engine_step.h"
#include "engine/gpu/gpu_executor.h"
#include "engine/host/host_plan_executor.h"
#include "hetccl_version.h"
#include "op/op_traits.h"
#include "runtime/device/current_device.h"
#include "runtime/device/device_module_loader.h"
#include "runtime/gpu_device.h"
#include "transport/transport_registry.h"
#include "util/collective_setup.h"
#include "util/error.h"
#include "util/log.h"
#include "util/net_interfaces.h"
#include "util/oob.h"
#include "util/settings_agreement.h"
#include "util/wire.h"

namespace hetccl {
namespace {

// The vendor layer sees the bootstrap through the Oob interface; each
// exchange takes the communicator's next tag, which every rank draws in
// the same order.
class BootstrapOob : public Oob {
 public:
  BootstrapOob(Bootstrap& bootstrap, std::function<uint32_t()> nextTag)
      : bootstrap_(bootstrap), nextTag_(std::move(nextTag)) {}
  int rank() const override { return bootstrap_.rank(); }
  int nranks() const override { return bootstrap_.nranks(); }
  void allGather(void* data, size_t bytesPerRank) override {
    bootstrap_.allGather(data, bytesPerRank, nextTag_());
  }
  void barrier() override { bootstrap_.barrier(nextTag_()); }

 private:
  Bootstrap& bootstrap_;
  std::function<uint32_t()> nextTag_;
};

constexpr double kAbortDrainSeconds = 5.0;

}  // namespace

Communicator::Communicator(int rank, int nranks, CommConfig config,
                           std::optional<Placement> inherited)
    : rank_(rank),
      nranks_(nranks),
      config_(std::move(config)),
      settings_(Settings::fromEnvironment()),
      inherited_(inherited),
      gpu_(currentGpuDevice()),
      opsAbort_(std::make_shared<AbortSignal>()),
      calls_(std::make_shared<CallLog>()),
      liveness_(std::make_shared<PeerLiveness>(nranks)),
      waiting_(std::make_shared<WaitingCall>()) {}

Communicator::~Communicator() {
  bootstrapAbort_ = true;
  if (initThread_.joinable()) initThread_.join();
}

Runtime& Communicator::runtime() const { return hostRuntime(); }

void Communicator::initialize(const ncclUniqueId& id) {
  try {
    connect(id);
    setUpDomains();
    markReady();
    LOG_INFO(kLogInit, "rank %d of %d ready (%s%s)", rank_, nranks_,
             runtimeKindName(runtimeKind()),
             config_.name.empty() ? "" : (", " + config_.name).c_str());
    logTopology();
  } catch (...) {
    Error error = initError();
    setState(error.code(), error.what());
    throw error;
  }
}

void Communicator::stopInit(const std::string& why) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (state_ != ncclInProgress) return;
  initStopped_ = why;
  bootstrapAbort_ = true;
}

void Communicator::markReady() {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (!initStopped_.empty()) throw Error(ncclSystemError, initStopped_);
  state_ = ncclSuccess;
  stateMessage_.clear();
}

Error Communicator::initError() const {
  Error error = currentExceptionAsError();
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (initStopped_.empty()) return error;
  return Error(ncclSystemError, format("rank %d: init stopped: %s", rank_,
                                       initStopped_.c_str()));
}

void Communicator::initializeInBackground(const ncclUniqueId& id) {
  initThread_ = std::thread([this, id] {
    try {
      initialize(id);
    } catch (...) {
      LOG_WARN(kLogInit, "rank %d: nonblocking init failed: %s", rank_,
               currentExceptionAsError().what());
    }
  });
}

void Communicator::connect(const ncclUniqueId& id) {
  if (gpu_ && gpu_->emulated)
    LOG_INFO(kLogInit,
             "rank %d: HETCCL_EMULATED_GPU=1: a GPU rank whose GPU is the "
             "host (emulated device module, domains on the host collectives)",
             rank_);
  if (!gpu_)
    LOG_INFO(kLogInit,
             "rank %d: no NVIDIA or AMD device is current in this process (no "
             "CUDA or HIP runtime loaded, or no device): a CPU rank",
             rank_);
  startRootIfNeeded(id, rank_, settings_.bootstrap);
  commName_ = format("%016llx",
                     static_cast<unsigned long long>(fnv1a64(&id, sizeof(id))));
  PeerInfo local = PeerInfo::local(rank_, nranks_, gpu_, settings_, inherited_);
  bootstrap_ =
      Bootstrap::init(id, rank_, nranks_, &local, sizeof(local),
                      &bootstrapAbort_, settings_.bootstrap.timeoutSeconds);
  peers_.resize(nranks_);
  for (int r = 0; r < nranks_; ++r)
    std::memcpy(&peers_[r], bootstrap_->peerInfo(r), sizeof(PeerInfo));
  checkSameBuild(peers_);
  warnIfInterfaceStaysOnHost();
  std::vector<uint64_t> digests;
  for (const PeerInfo& peer : peers_) digests.push_back(peer.settingsDigest);
  BootstrapOob oob(*bootstrap_, [this] { return nextTag(); });
  checkSettingsAgree(oob, settings_.mustAgree, digests);
}

// An interface other hosts cannot reach works while every rank is on one
// host; once ranks are on several, their sockets may reach the wrong
// machine or none, so the user hears which interface would do.
void Communicator::warnIfInterfaceStaysOnHost() const {
  const bool severalHosts =
      std::any_of(peers_.begin(), peers_.end(), [&](const PeerInfo& peer) {
        return peer.hostId != peers_[rank_].hostId;
      });
  if (!severalHosts) return;
  const std::string note = unreachableInterfaceNote();
  if (!note.empty()) LOG_WARN(kLogNet, "rank %d: %s", rank_, note.c_str());
}

// One domain: its vendor communicator runs every operation. Several: each
// rank gets a communicator for its own domain, and the heterogeneous
// executor runs plans over it and over links to the other domains.
void Communicator::setUpDomains() {
  const PeerInfo& self = peers_[rank_];
  std::vector<RankPlacement> placements;
  for (const PeerInfo& peer : peers_)
    placements.push_back({peer.runtime, peer.domainLabel, peer.hostId});
  domains_.emplace(placements);
  const DomainMap& domains = *domains_;
  domainCount_ = domains.count();
  domainIndex_ = domains.domainOf(rank_);
  BootstrapOob oob(*bootstrap_, [this] { return nextTag(); });
  if (domainCount_ == 1) {
    std::vector<int> everyone(nranks_);
    for (int r = 0; r < nranks_; ++r) everyone[r] = r;
    executor_ = createDomainComm(oob, domainRuntime(), everyone);
    // The decision log's word on every op: there is nothing to choose.
    LOG_INFO(kLogTuning,
             "rank %d: one domain: every operation goes to %s unchanged", rank_,
             domainBackendFor(domainRuntime()).name());
    domainBackends_.assign(nranks_, domainRuntime());
    if (settings_.checkCalls && nranks_ > 1 && executor_->libraryFeatures())
      callCheck_ = std::make_unique<PassThroughCallCheck>(*bootstrap_);
    startStallWatch(domains);
  } else {
    setUpHeterogeneous(oob, domains, placements);
  }
  std::vector<Watchdog::Peer> watched;
  for (int r = 0; r < nranks_; ++r)
    if (peers_[r].pid != self.pid) watched.push_back({r, peers_[r].pid});
  watchdog_ = std::make_unique<Watchdog>(
      std::move(watched),
      [liveness = liveness_, names = rankNames()](const Watchdog::Peer& peer) {
        liveness->markLost(peer.rank,
                           format("%s exited before the operation could "
                                  "complete",
                                  names.at(peer.rank).c_str()));
      });
}

// Each rank gets a communicator for its own domain from the back-end of
// its runtime (the host collectives for CPU ranks, NCCL or RCCL for GPU ranks,
// wherever the domain's ranks are), links to the ranks of the other
// domains, and an engine that runs plans over both: the host stream's
// executor for CPU ranks, the GPU engine for GPU ranks.
void Communicator::setUpHeterogeneous(
    Oob& oob, const DomainMap& domains,
    const std::vector<RankPlacement>& placements) {
  const std::vector<int>& members = domains.members(domainIndex_);
  // Domain exchanges use tags of their own: only that domain's ranks take
  // part, so they must not draw from the communicator's sequence.
  uint32_t tagSpace = 0x40000000u | (static_cast<uint32_t>(domainIndex_) << 20);
  SubsetOob domainOob(*bootstrap_, members, tagSpace);
  // A domain that cannot start (its vendor library missing on that node,
  // say) fails every rank's init, not only its own ranks': the others
  // would wait for it in the next step until the bootstrap timeout.
  std::shared_ptr<Executor> domainComm;
  std::optional<Error> failure;
  // Everything made on a GPU is made with that GPU current (also on the
  // thread of a nonblocking init, or of ncclCommInitAll), and the caller
  // finds its own device current again afterwards.
  std::optional<CurrentDevice> onGpu;
  captureFailure(failure, [&] {
    if (gpu_) onGpu.emplace(deviceModuleOf(*gpu_), gpu_->ordinal);
    domainComm = createDomainComm(domainOob, domainRuntime(), members);
  });
  agreeOnSuccess(oob, failure, "heterogeneous communicator",
                 "setting up its domain's communicator");
  auto links = std::make_shared<CrossDomainLinks>(
      oob, placements, domains, settings_.transports,
      settings_.bootstrap.timeoutSeconds, settings_.plans, opsAbort_, liveness_,
      calls_, waiting_, gpu_ ? &deviceModuleOf(*gpu_) : nullptr);
  crossDomainLinks_ = links;
  const PlanSettings plans =
      tunePlans(settings_.plans, oob, domains, placements, *links, *opsAbort_,
                settings_.bootstrap.timeoutSeconds);
  startCallProbe(domains, links);
  transportChoice_ = links->choice();
  gatherDomainBackends(oob);
  if (!gpu_) {
    LOG_INFO(kLogInit,
             "rank %d: heterogeneous communicator, %d domains, this rank in "
             "domain %d (local rank %d of %zu), links: %s",
             rank_, domains.count(), domainIndex_, domains.localRank(rank_),
             members.size(), links->summary().c_str());
    auto executor = HostPlanExecutor::create(rank_, domains, std::move(links),
                                             plans, settings_.timeoutSeconds,
                                             domainComm, opsAbort_);
    if (timesItsStep(plans))
      tuneToMeasuredStep(*executor, plans, domains, oob,
                         settings_.bootstrap.timeoutSeconds);
    executor_ = std::move(executor);
    return;
  }
  GpuEngineSettings engineSettings = engineSettingsForThisGpu();
  GpuPlanExecutorSetup engine{deviceModuleOf(*gpu_),
                              gpu_->ordinal,
                              rank_,
                              domains,
                              std::move(links),
                              std::move(domainComm),
                              plans,
                              engineSettings,
                              settings_.timeoutSeconds,
                              opsAbort_};
  engine.domainMarksWaits = domainBackendFor(domainRuntime()).marksWaits();
  GpuExecutor chosen = createGpuExecutor(
      GpuExecutorSetup{std::move(engine), oob, settings_.transports.selection,
                       everyRankIsALocalGpu(), liveness_, rankNames(),
                       settings_.bootstrap.stallWarnSeconds,
                       settings_.bootstrap.timeoutSeconds});
  streamDriven_ = chosen.streamDriven;
  gpuBuffers_ = std::move(chosen.gpuBuffers);
  executor_ = std::move(chosen.executor);
}

// Calls that disagree so that ranks wait for each other without a byte
// moving are found by asking the peer, and every disagreement found is
// told to every rank (core/call_probe.h).
void Communicator::startCallProbe(
    const DomainMap& domains, const std::shared_ptr<CrossDomainLinks>& links) {
  std::vector<int> linkPeers;
  for (int r = 0; r < nranks_; ++r)
    if (domains.domainOf(r) != domainIndex_) linkPeers.push_back(r);
  auto names = waitDescription(domains, links);
  callProbe_ = std::make_unique<CallProbe>(
      *bootstrap_, calls_, waiting_, std::move(linkPeers), opsAbort_, liveness_,
      StallReport(rank_, settings_.bootstrap.stallWarnSeconds, names, calls_),
      statusFile(names), names);
}

// One domain has no call probe (its back-end compares the calls): a
// lighter thread reports its stalls and keeps its status file, when there
// is something to do. A back-end whose waits are on the GPU stream marks
// none, so only a status file (the latest call) makes one there; a single
// rank waits for nobody.
void Communicator::startStallWatch(const DomainMap& domains) {
  const bool reportsStalls = settings_.bootstrap.stallWarnSeconds > 0 &&
                             nranks_ > 1 &&
                             domainBackendFor(domainRuntime()).marksWaits();
  auto names = waitDescription(domains, nullptr);
  std::unique_ptr<StatusFile> status = statusFile(names);
  if (!reportsStalls && !status) return;
  stallWatch_ = std::make_unique<StallWatch>(
      waiting_,
      StallReport(rank_, settings_.bootstrap.stallWarnSeconds, names, calls_),
      std::move(status));
}

// Every rank by its domain, host and pid, with its link's transport if it
// is of another domain; a peer's latest call seen on its link, while the
// links live.
std::shared_ptr<const WaitDescription> Communicator::waitDescription(
    const DomainMap& domains,
    const std::shared_ptr<CrossDomainLinks>& links) const {
  std::vector<WaitDescription::Peer> peers(nranks_);
  for (int r = 0; r < nranks_; ++r) {
    peers[r].who =
        format("rank %d (domain %d, host %s, pid %d)", r, domains.domainOf(r),
               peers_[r].hostname, peers_[r].pid);
    peers[r].domain = domains.domainOf(r);
    if (links && peers[r].domain != domainIndex_)
      peers[r].link = links->choice()->between(rank_, r).name();
  }
  std::function<uint64_t(int)> latestCallFrom;
  if (links)
    latestCallFrom = [weak = std::weak_ptr<CrossDomainLinks>(links)](int peer) {
      const std::shared_ptr<CrossDomainLinks> alive = weak.lock();
      return alive ? alive->to(peer).latestCallFrom() : uint64_t{0};
    };
  return std::make_shared<WaitDescription>(
      domainIndex_, domainBackendFor(domainRuntime()).name(), std::move(peers),
      std::move(latestCallFrom));
}

// Nothing at all without HETCCL_STATUS_DIR: the probe skips a null one.
std::unique_ptr<StatusFile> Communicator::statusFile(
    std::shared_ptr<const WaitDescription> names) const {
  if (!settings_.statusDir || settings_.statusDir->empty()) return nullptr;
  return std::make_unique<StatusFile>(
      *settings_.statusDir,
      StatusFile::Identity{commName_, rank_, nranks_, peers_[rank_].hostname,
                           peers_[rank_].pid},
      calls_, std::move(names));
}

std::vector<std::string> Communicator::rankNames() const {
  std::vector<std::string> names;
  for (int r = 0; r < nranks_; ++r)
    names.push_back(format("rank %d (host %s, pid %d)", r, peers_[r].hostname,
                           peers_[r].pid));
  return names;
}

// Whether the GPU ranks may meet in shared outboxes
// (engine/gpu/gpu_executor.h).
bool Communicator::everyRankIsALocalGpu() const {
  for (const PeerInfo& peer : peers_)
    if (peer.runtime != static_cast<int>(gpu_->runtime) ||
        peer.hostId != peers_[rank_].hostId)
      return false;
  return true;
}

// The GPU engine's settings, less what a GPU shared with other ranks
// cannot take.
GpuEngineSettings Communicator::engineSettingsForThisGpu() const {
  GpuEngineSettings engineSettings = settings_.gpuEngine;
  if (engineSettings.stagedLowLatencyMaxBytes > 0 &&
      gpuSharedWithAnotherProcess()) {
    LOG_INFO(kLogInit,
             "rank %d: a rank of another process runs on this GPU: no "
             "staged copies by kernel (HETCCL_STAGED_LL_MAX), whose waits "
             "would hold the GPU while the processes take turns on it",
             rank_);
    engineSettings.stagedLowLatencyMaxBytes = 0;
  }
  if (engineSettings.stagingStreams > 1 && gpuSharedWithinProcess()) {
    LOG_WARN(kLogInit,
             "rank %d: another rank of this process runs on this GPU: one "
             "pair of staging streams, not HETCCL_STAGING_STREAMS=%zu; the "
             "ranks share the GPU's hardware queues "
             "(CUDA_DEVICE_MAX_CONNECTIONS, 8 by default), and with more "
             "streams than queues one rank's wait for the other's bytes "
             "can hold back the copies that send them",
             rank_, engineSettings.stagingStreams);
    engineSettings.stagingStreams = 1;
  }
  return engineSettings;
}

// The kernels of two processes take turns on a GPU (time slices of a
// millisecond or more): a kernel of one that waits for the other's data
// holds the GPU until its slice ends.
bool Communicator::gpuSharedWithAnotherProcess() const {
  const PeerInfo& self = peers_[rank_];
  if (self.gpuId == 0) return false;
  for (const PeerInfo& peer : peers_)
    if (peer.gpuId == self.gpuId && peer.pid != self.pid) return true;
  return false;
}

// Ranks of one process on one GPU share its context and so its hardware
// queues, whatever their domains and pretend hosts (the GPU's id is 0 for
// an emulated GPU, hence the host name).
bool Communicator::gpuSharedWithinProcess() const {
  const PeerInfo& self = peers_[rank_];
  for (int r = 0; r < nranks_; ++r) {
    const PeerInfo& peer = peers_[r];
    if (r != rank_ && peer.pid == self.pid && peer.gpuId == self.gpuId &&
        peer.runtime == self.runtime && peer.device == self.device &&
        std::strncmp(peer.hostname, self.hostname, sizeof(self.hostname)) == 0)
      return true;
  }
  return false;
}

// The back-end registered for `runtime` runs the domain of `members`
// (whom `oob` spans).
std::shared_ptr<Executor> Communicator::createDomainComm(
    Oob& oob, RuntimeKind runtime, const std::vector<int>& members) {
  const DomainBackend& backend = domainBackendFor(runtime);
  LOG_INFO(kLogInit, "rank %d: its domain of %zu rank(s) runs on %s", rank_,
           members.size(), backend.name());
  std::shared_ptr<Executor> comm =
      backend.create({oob, settings_.backends, settings_.timeoutSeconds,
                      gpu_ ? gpu_->ordinal : -1, opsAbort_,
                      liveness_->subset(members), waiting_, members});
  LibraryFeatures* vendor = comm->libraryFeatures();
  domainLibrary_ =
      vendor ? vendor->describe()
             : format("HetCCL's %s %s", backend.name(), HETCCL_RELEASE);
  return comm;
}

// A GPU emulated on the host runs its domain on the host collectives, which
// only its own rank knows.
void Communicator::gatherDomainBackends(Oob& oob) {
  std::vector<int32_t> runtimes(nranks_);
  runtimes[rank_] = static_cast<int32_t>(domainRuntime());
  oob.allGather(runtimes.data(), sizeof(int32_t));
  for (int32_t runtime : runtimes)
    domainBackends_.push_back(static_cast<RuntimeKind>(runtime));
}

std::vector<std::string> Communicator::topology() const {
  return describeTopology({peers_, *domains_, domainBackends_,
                           transportChoice_.get(), streamDriven_});
}

// Rank 0 only: every rank's map is the same.
void Communicator::logTopology() const {
  if (rank_ != 0 || !logEnabled(LogLevel::Info, kLogInit)) return;
  for (const std::string& line : topology())
    LOG_INFO(kLogInit, "topology: %s", line.c_str());
}

size_t Communicator::crossDomainBytesSent() const {
  auto links = crossDomainLinks_.lock();
  return links ? links->bytesSent() : 0;
}

size_t Communicator::crossDomainBytesReceived() const {
  auto links = crossDomainLinks_.lock();
  return links ? links->bytesReceived() : 0;
}

Placement Communicator::placement() const {
  return {peers_[rank_].domainLabel, peers_[rank_].hostId};
}

void Communicator::setState(ncclResult_t state, const std::string& message) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  state_ = state;
  stateMessage_ = message;
}

ncclResult_t Communicator::state() const {
  if (opsAbort_->raised()) return opsAbort_->code();
  std::lock_guard<std::mutex> lock(stateMutex_);
  return state_;
}

// The vendor library is asked only here, not on every operation: its
// query is not free.
ncclResult_t Communicator::asyncError() const {
  ncclResult_t current = state();
  if (current != ncclSuccess || !executor_) return current;
  ncclResult_t background = executor_->asyncError();
  // The executor's look may have raised the abort signal.
  return background != ncclSuccess ? background : state();
}

std::string Communicator::stateMessage() const {
  if (opsAbort_->raised()) return opsAbort_->reason();
  std::lock_guard<std::mutex> lock(stateMutex_);
  return stateMessage_;
}

void Communicator::checkUsable() const {
  ncclResult_t current = state();
  if (current == ncclSuccess) return;
  if (current == ncclInProgress)
    fail(ncclInvalidUsage,
         "communicator (rank %d) is still initialising: poll "
         "ncclCommGetAsyncError until it returns ncclSuccess",
         rank_);
  throw Error(current, "communicator is unusable: " + stateMessage());
}

// A GPU rank's stream belongs to CUDA, which HetCCL cannot ask about
// without linking it; NCCL reports a bad one when the op is enqueued.
void Communicator::checkStream(StreamHandle stream) const {
  if (runtimeKind() == RuntimeKind::Host) runtime().checkStream(stream);
}

void Communicator::numberCall(Op& op) {
  if (sendsTo_.empty()) {
    sendsTo_.assign(nranks_, 0);
    receivesFrom_.assign(nranks_, 0);
  }
  // Sends and receives are numbered per peer and direction, collectives
  // per communicator.
  if (isPointToPoint(op.kind))
    op.sequence =
        ++(op.kind == OpKind::Send ? sendsTo_ : receivesFrom_)[op.root];
  else
    op.sequence = ++collectiveCalls_;
}

void Communicator::launch(const std::vector<Op>& ops, StreamHandle stream) {
  if (callCheck_) {
    postCalls(ops);
    verifyCalls(ops);
  }
  launchUnchecked(ops, stream);
}

void Communicator::postCalls(const std::vector<Op>& ops) {
  checkUsable();
  callCheck_->post(ops);
}

void Communicator::verifyCalls(const std::vector<Op>& ops) {
  try {
    callCheck_->verify(ops);
  } catch (const Error& e) {
    // The ranks are out of step: later calls must not reach the library.
    setState(e.code(), e.what());
    throw;
  }
}

void Communicator::launchUnchecked(const std::vector<Op>& ops,
                                   StreamHandle stream) {
  checkUsable();
  for (const Op& op : ops) calls_->record(signatureOf(op));
  executor_->launch(ops, stream);
}

std::unique_ptr<Communicator> Communicator::split(int color, int key,
                                                  const CommConfig& config,
                                                  const std::string& refusal) {
  checkUsable();
  struct Choice {
    int32_t color, key, refused;
  };
  std::vector<Choice> choices(nranks_);
  choices[rank_] = {color, key, refusal.empty() ? 0 : 1};
  bootstrap_->allGather(choices.data(), sizeof(Choice), nextTag());
  if (!refusal.empty()) throw Error(ncclInvalidArgument, refusal);
  for (int r = 0; r < nranks_; ++r)
    if (choices[r].refused)
      fail(ncclInvalidArgument,
           "rank %d passed invalid arguments (its own error "
           "says which), so no rank splits",
           r);
  std::vector<int> members;
  for (int r = 0; r < nranks_; ++r)
    if (color != NCCL_SPLIT_NOCOLOR && choices[r].color == color)
      members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return choices[a].key < choices[b].key;
  });
  // The first member of each colour hosts the new communicator's root.
  std::vector<ncclUniqueId> ids(nranks_);
  std::memset(ids.data(), 0, ids.size() * sizeof(ncclUniqueId));
  if (!members.empty() && members[0] == rank_)
    ids[rank_] = createEphemeralUniqueId(settings_.bootstrap);
  bootstrap_->allGather(ids.data(), sizeof(ncclUniqueId), nextTag());
  if (members.empty()) return nullptr;
  int newRank = static_cast<int>(
      std::find(members.begin(), members.end(), rank_) - members.begin());
  auto comm = std::make_unique<Communicator>(
      newRank, static_cast<int>(members.size()), config, placement());
  if (config.blocking)
    comm->initialize(ids[members[0]]);
  else
    comm->initializeInBackground(ids[members[0]]);
  return comm;
}

std::unique_ptr<Communicator> Communicator::shrink(
    const std::vector<int>& excluded, const CommConfig& config, bool abortOps) {
  if (state() == ncclInProgress) checkUsable();
  if (abortOps) {
    opsAbort_->raise(ncclSystemError,
                     "operation aborted by ncclCommShrink(NCCL_SHRINK_ABORT)");
    if (executor_) executor_->releaseStreams();
    if (executor_) executor_->drain(kAbortDrainSeconds);
  }
  std::vector<int> survivors;
  for (int r = 0; r < nranks_; ++r)
    if (std::find(excluded.begin(), excluded.end(), r) == excluded.end())
      survivors.push_back(r);
  auto self = std::find(survivors.begin(), survivors.end(), rank_);
  if (self == survivors.end())
    fail(ncclInvalidUsage,
         "rank %d is in the exclude list of ncclCommShrink: excluded ranks "
         "must not call it",
         rank_);
  uint32_t tag = nextTag();
  ncclUniqueId id;
  if (survivors[0] == rank_) {
    id = createEphemeralUniqueId(settings_.bootstrap);
    for (size_t i = 1; i < survivors.size(); ++i)
      bootstrap_->send(survivors[i], tag, &id, sizeof(id));
  } else {
    bootstrap_->recv(survivors[0], tag, &id, sizeof(id));
  }
  auto comm = std::make_unique<Communicator>(
      static_cast<int>(self - survivors.begin()),
      static_cast<int>(survivors.size()), config, placement());
  if (config.blocking)
    comm->initialize(id);
  else
    comm->initializeInBackground(id);
  return comm;
}

void Communicator::finalize() {
  if (initThread_.joinable()) initThread_.join();
  if (!executor_) return;
  while (!executor_->drain(0.1)) opsAbort_->throwIfRaised();
  // Destroy finalizes too; the vendor library's finalize runs once.
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (!executorFinalized_) executor_->finalize();
  executorFinalized_ = true;
}

LibraryFeatures* Communicator::libraryFeatures() const {
  return executor_ ? executor_->libraryFeatures() : nullptr;
}

void Communicator::revoke() {
  opsAbort_->raiseUnannounced(ncclInvalidUsage,
                              "communicator was revoked (ncclCommRevoke)");
  if (executor_) executor_->releaseStreams();
  if (executor_) executor_->drain(kAbortDrainSeconds);
}

void Communicator::leaveAtExit() {
  if (initThread_.joinable()) return;  // still initialising: nothing ran
  if (executor_) executor_->leaveAtExit();
}

void Communicator::abort() {
  opsAbort_->raise(ncclSystemError, "communicator was aborted (ncclCommAbort)");
  bootstrapAbort_ = true;  // ends a background init's waits, then join it
  if (initThread_.joinable()) initThread_.join();
  if (bootstrap_) bootstrap_->abort();
  if (executor_) executor_->abort();
  if (executor_ && !executor_->drain(kAbortDrainSeconds))
    LOG_WARN(kLogInit, "rank %d: work still running %g s after abort", rank_,
             kAbortDrainSeconds);
}

}  // namespace hetccl
