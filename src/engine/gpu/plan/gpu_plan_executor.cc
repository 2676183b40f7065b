#include "engine/gpu/plan/gpu_plan_executor.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "algo/pipeline.h"
#include "engine/gpu/plan/single_rank_domain.h"
#include "op/op_traits.h"
#include "runtime/device/current_device.h"
#include "runtime/device/device_module.h"
#include "runtime/gpu_runtimes.h"
#include "util/error.h"
#include "util/log.h"
#include "util/monotonic_word.h"

namespace hetccl {
namespace {

constexpr uint64_t kReleaseAll = HETCCL_DEVICE_WAIT_RELEASED;
// How long an abort lets the engine's stream run out its released work.
constexpr double kReleaseDrainSeconds = 10;
// How long it waits for that before the domain's abort, which ends a domain
// kernel that waits for a dead peer.
constexpr double kAbortDrainSeconds = 2;
// Launches with a script alive at once: every captured launch that crosses
// domains through the proxy (32 KB of pinned memory).
constexpr size_t kScriptControlWords = 4096;
// Timed marks per launch with HETCCL_ENGINE_TIMELINE (a 1 GB all-reduce of
// two domains in 16 MB chunks needs a few hundred).
constexpr size_t kTimelineMarks = 8192;

// The communicator makes its device current while it builds the engine.
const DeviceModule& onDevice(const DeviceModule& module, int device) {
  int current = -1;
  module.check(module.api().getDevice(&current), "asking for the device");
  if (current != device)
    fail(ncclInternalError,
         "the GPU engine of device %d is being built with device %d current",
         device, current);
  // Before any stream can be held back by a host word (see loadKernels).
  module.check(module.api().loadKernels(), "loading the reduction kernels");
  return module;
}

// The most scratch any plan asks for: two steps of the reduce-scatter's
// laid-out input, partial and one partial per domain; or what the one-shot
// plans keep: at most the domain's partials and one per other domain.
size_t scratchBytes(const GpuPlanExecutorSetup& setup) {
  const size_t domains = setup.domains.count();
  return std::max(2 * (domains + 2) * setup.plans.chunkBytes,
                  domains * setup.plans.oneShotMaxBytes);
}

// What runs this rank's domain steps: the vendor library, unless the rank
// is its domain's only member.
std::shared_ptr<Executor> domainStepsOf(GpuPlanExecutorSetup& setup) {
  const int domain = setup.domains.domainOf(setup.rank);
  if (setup.domains.members(domain).size() > 1)
    return std::move(setup.domainComm);
  return std::make_shared<SingleRankDomain>(setup.module,
                                            std::move(setup.domainComm));
}

// The numbered domain steps of a domain of several GPUs. A vendor
// library's take them with HETCCL_STALL_STEPS only: their two stream
// writes cost a few microseconds per step on a real GPU
// (bench/gpu_step_marks_cost.cu), too much for every job. A back-end that
// marks its own waits (the host collectives under emulated GPUs) takes
// them always, so that the proxy leaves its marks standing. None for one
// GPU, whose steps are local copies that wait for no peer.
std::unique_ptr<DomainStepLog> domainStepLogOf(
    const GpuPlanExecutorSetup& setup) {
  const DomainMap& domains = setup.domains;
  if (!(setup.engine.stallSteps || setup.domainMarksWaits) ||
      domains.members(domains.domainOf(setup.rank)).size() < 2)
    return nullptr;
  return std::make_unique<DomainStepLog>(setup.module);
}

// HETCCL_PROXY_TRACE=PREFIX: this rank's trace goes to PREFIX.RANK.
std::unique_ptr<ProxyTrace> proxyTraceOf(const GpuPlanExecutorSetup& setup) {
  if (setup.engine.proxyTrace.empty()) return nullptr;
  return std::make_unique<ProxyTrace>(
      format("%s.%d", setup.engine.proxyTrace.c_str(), setup.rank));
}

// The memory a link must move to take the GPU's buffers as they are; an
// emulated GPU's is host memory.
MemoryKind deviceMemoryOf(const DeviceModule& module) {
  const GpuRuntime* runtime = findGpuRuntime(module.runtimeName());
  return runtime ? runtime->memory : kHostMemory;
}

// How the plans' transfers across domains reach the links, for the
// decision log.
std::string describeStaging(int directLinks, int links, size_t pieceBytes,
                            size_t streamPairs) {
  const std::string staged = format(
      "staged through pinned host memory in pieces of up to %s, %zu pair%s "
      "of staging streams",
      bytesText(pieceBytes).c_str(), streamPairs, streamPairs == 1 ? "" : "s");
  if (directLinks == 0) return staged;
  if (directLinks == links) return "go to the links as they are (UCX direct)";
  return format(
      "go to %d of %d links as they are (UCX direct), the others "
      "%s",
      directLinks, links, staged.c_str());
}

}  // namespace

GpuPlanExecutor::GpuPlanExecutor(GpuPlanExecutorSetup setup)
    : module_(onDevice(setup.module, setup.device)),
      device_(setup.device),
      rank_(setup.rank),
      domains_(setup.domains),
      domainComm_(domainStepsOf(setup)),
      abort_(std::move(setup.abort)),
      timeoutSeconds_(setup.timeoutSeconds),
      flagMemory_(module_, sizeof(Flags)),
      flags_(reinterpret_cast<Flags*>(flagMemory_.data())),
      stream_(module_),
      copies_(module_, stream_.handle(), setup.engine.stagingStreams),
      timeline_(setup.plans.timeline
                    ? std::make_unique<StreamTimeline>(
                          module_, stream_.handle(), kTimelineMarks)
                    : nullptr),
      data_(module_, stream_.handle(), scratchBytes(setup), timeline_.get()),
      onFailure_(std::move(setup.onFailure)),
      rings_(module_),
      links_(std::move(setup.links)),
      domainSteps_(domainStepLogOf(setup)),
      proxy_(
          abort_, timeoutSeconds_, &flags_->engineReached,
          PinnedHostMemory(module_, kScriptControlWords * sizeof(uint64_t)),
          [this](const Error& error) { failed(error); },
          links_->waiting().get(), domainSteps_.get(), setup.domainMarksWaits,
          proxyTraceOf(setup)),
      deviceMemory_(deviceMemoryOf(module_)),
      callerReached_(module_),
      enginePassed_(module_) {
  for (uint64_t* word :
       {&flags_->inputsReady, &flags_->done, &flags_->engineReached})
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
  const StagingPath path{module_,
                         stream_.handle(),
                         copies_,
                         proxy_,
                         crossDomainPieceBytes(setup.plans.chunkBytes),
                         kStagingRingSlots,
                         timeline_.get(),
                         &launchGate_,
                         deviceMemory_,
                         domainSteps_.get(),
                         &unchangedInputs_,
                         setup.engine.stagedLowLatencyMaxBytes,
                         setup.engine.stagedCopyPieces,
                         setup.engine.stagedRunsFrom};
  const int directLinks = openStagedLinks(path);
  warnOfNeedlessStaging(path.deviceMemory);
  context_.rank = rank_;
  context_.nranks = domains_.nranks();
  context_.domains = &domains_;
  context_.domainComm = domainComm_.get();
  if (timeline_) {
    timedDomainSteps_ =
        std::make_unique<TimedDomainSteps>(*domainComm_, *timeline_);
    context_.domainComm = timedDomainSteps_.get();
  }
  if (domainSteps_) {
    loggedDomainSteps_ = std::make_unique<LoggedDomainSteps>(
        module_, *context_.domainComm, *domainSteps_);
    context_.domainComm = loggedDomainSteps_.get();
  }
  context_.domainStream = static_cast<StreamHandle>(stream_.handle());
  context_.linkTo = [this](int peer) -> Link& {
    auto it = stagedLinks_.find(peer);
    if (it == stagedLinks_.end())
      fail(ncclInternalError, "rank %d has no link to rank %d", rank_, peer);
    return *it->second;
  };
  context_.abort = abort_.get();
  context_.timeoutSeconds = timeoutSeconds_;
  context_.chunkBytes = setup.plans.chunkBytes;
  context_.oneShotMaxBytes = setup.plans.oneShotMaxBytes;
  context_.tuning = setup.plans.tuning;
  context_.data = &data_;
  context_.dataOnGpu = true;
  context_.onPlanStart = [this](const std::vector<Op>& ops) {
    unchangedInputs_.start(ops, rank_, domains_.nranks());
    copies_.markPlanStart();
  };
  decisions_ = std::make_unique<DecisionLog>(
      rank_,
      "links: " + links_->summary() + "; GPU buffers " +
          describeStaging(directLinks, static_cast<int>(stagedLinks_.size()),
                          path.largestPiece, copies_.pairs()));
  context_.decisions = decisions_.get();
  warmUpDomain();
  LOG_INFO(
      kLogInit,
      "rank %d: GPU engine: domain %d of %d (local rank %d of %zu), "
      "domain steps %s, links: %s%s",
      rank_, domains_.domainOf(rank_), domains_.count(),
      domains_.localRank(rank_),
      domains_.members(domains_.domainOf(rank_)).size(),
      domains_.members(domains_.domainOf(rank_)).size() > 1
          ? "on the vendor library"
          : "local (the rank is its domain)",
      links_->summary().c_str(),
      directLinks > 0
          ? format("; GPU buffers go to %d of them as they are", directLinks)
                .c_str()
          : "");
}

// A staged link to every rank of another domain; those over a transport
// that moves the GPU's memory itself take its buffers as they are. Returns
// how many do.
int GpuPlanExecutor::openStagedLinks(const StagingPath& path) {
  int direct = 0;
  for (int peer = 0; peer < domains_.nranks(); ++peer) {
    if (domains_.domainOf(peer) == domains_.domainOf(rank_)) continue;
    auto link =
        std::make_unique<StagedLink>(links_->shared(peer), path, rings_);
    direct += link->direct() ? 1 : 0;
    stagedLinks_[peer] = std::move(link);
  }
  return direct;
}

// Links of one domain may differ (a peer on this host, another elsewhere):
// each distinct path is said once.
std::vector<std::string> GpuPlanExecutor::gpuBufferPaths() const {
  std::map<int, std::set<std::string>> pathsByDomain;
  for (const auto& [peer, link] : stagedLinks_)
    pathsByDomain[domains_.domainOf(peer)].insert(
        format("%s, %s", links_->choice()->between(rank_, peer).name(),
               link->innerLink()->gpuMemoryPath(deviceMemory_).c_str()));
  std::vector<std::string> lines;
  for (const auto& [domain, paths] : pathsByDomain) {
    std::string line = format("domain %d: ", domain);
    for (const std::string& path : paths)
      line += (&path == &*paths.begin() ? "" : "; ") + path;
    lines.push_back(std::move(line));
  }
  return lines;
}

// Staging costs two copies and a proxy hop per transfer; where a setting
// alone chose it over a link that takes the buffers as they are, the user
// hears so once per communicator. The links share their transport's
// setting, so the first reason speaks for all.
void GpuPlanExecutor::warnOfNeedlessStaging(MemoryKind memory) const {
  int count = 0;
  std::string why;
  for (const auto& entry : stagedLinks_) {
    std::string reason = entry.second->innerLink()->whyStagesGpuMemory(memory);
    if (reason.empty()) continue;
    ++count;
    if (why.empty()) why = std::move(reason);
  }
  if (count > 0)
    LOG_WARN(kLogInit,
             "rank %d: GPU buffers to %d rank%s are staged through host "
             "memory and a proxy thread: %s",
             rank_, count, count == 1 ? "" : "s", why.c_str());
}

// The vendor library connects its ranks on their first collective and on
// the first send to each peer, allocating memory as it does. That happens
// now, at init: an allocation during a launch serialises the GPU's
// streams (CUDA's implicit synchronisation) behind whatever they wait
// for. One all-reduce and one exchange with every member of the domain,
// on the engine's stream, and wait.
void GpuPlanExecutor::warmUpDomain() {
  const std::vector<int>& members = domains_.members(domains_.domainOf(rank_));
  const int size = static_cast<int>(members.size());
  char* scratch = data_.scratch(sizeof(float) * (size + 1));
  Op allReduce;
  allReduce.kind = OpKind::AllReduce;
  allReduce.dtype = ncclFloat32;
  allReduce.count = 1;
  allReduce.sendbuff = allReduce.recvbuff = scratch;
  domainComm_->launch({allReduce}, context_.domainStream);
  std::vector<Op> exchange;
  for (int peer = 0; peer < size; ++peer) {
    if (members[peer] == rank_) continue;
    Op send = allReduce, recv = allReduce;
    send.kind = OpKind::Send;
    send.root = recv.root = peer;
    recv.kind = OpKind::Recv;
    recv.recvbuff = scratch + sizeof(float) * (peer + 1);
    exchange.push_back(send);
    exchange.push_back(recv);
  }
  if (!exchange.empty()) domainComm_->launch(exchange, context_.domainStream);
  module_.check(module_.api().streamSynchronize(stream_.handle()),
                "connecting the domain's vendor library");
}

double GpuPlanExecutor::timeOneElementAllReduceUs(int rounds,
                                                  double timeoutSeconds) {
  CurrentDevice ours(module_, device_);
  DeviceStream stream(module_);
  DeviceMemory buffer(module_, sizeof(float));
  const Op allReduce = oneElementAllReduce(buffer.data());
  const auto handle = static_cast<StreamHandle>(stream.handle());
  DecisionLog* decisions = context_.decisions;
  context_.decisions = nullptr;
  const double fastestUs = fastestRunUs(rounds, [&] {
    launch({allReduce}, handle);
    awaitStream(handle, timeoutSeconds,
                "a one-element all-reduce across the domains at init");
  });
  context_.decisions = decisions;
  links_->startCounting();
  return fastestUs;
}

void GpuPlanExecutor::retune(const PlanSettings& plans) {
  std::lock_guard<std::mutex> lock(launchMutex_);
  context_.tuning = plans.tuning;
  context_.oneShotMaxBytes = plans.oneShotMaxBytes;
}

// Polls rather than sleeps: what it waits for takes tens of microseconds.
void GpuPlanExecutor::awaitStream(StreamHandle stream, double timeoutSeconds,
                                  const char* what) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration<double>(timeoutSeconds > 0 ? timeoutSeconds : 1e9);
  for (;;) {
    int idle = 0;
    module_.check(module_.api().streamQuery(stream, &idle), what);
    if (idle) return;
    const bool late = std::chrono::steady_clock::now() > deadline;
    if (abort_->raised() || late) {
      releaseWaits();
      abort_->throwIfRaised();
      fail(ncclRemoteError, "rank %d: %s did not complete within %.0f s", rank_,
           what, timeoutSeconds);
    }
    std::this_thread::yield();
  }
}

// A clean destroy found every launch complete (finalize drained them), so
// nothing waits; a failed communicator's streams are released instead.
GpuPlanExecutor::~GpuPlanExecutor() {
  CurrentDevice ours(module_, device_);
  if (abort_->raised() || !launchesIdle()) releaseWaits();
  const int streamError = module_.api().streamSynchronize(stream_.handle());
  copies_.synchronize();  // before the rings go
  proxy_.stop();
  if (streamError != 0) {
    LOG_WARN(kLogColl, "rank %d: the GPU engine's stream failed", rank_);
    return;
  }
  if (timeline_) logTimeline();
  const std::string occupancy = proxy_.occupancy();
  if (!occupancy.empty())
    LOG_INFO(kLogTuning, "rank %d: GPU engine proxy: %s; %s pinned for staging",
             rank_, occupancy.c_str(), bytesText(rings_.pinnedBytes()).c_str());
}

void GpuPlanExecutor::logTimeline() {
  try {
    LOG_INFO(kLogTuning, "rank %d: GPU engine stream time: %s", rank_,
             timeline_->summary().c_str());
  } catch (const Error& e) {
    LOG_WARN(kLogTuning, "rank %d: no GPU engine timeline: %s", rank_,
             e.what());
  }
}

void GpuPlanExecutor::launch(const std::vector<Op>& ops, StreamHandle stream) {
  abort_->throwIfRaised();
  CurrentDevice ours(module_, device_);
  const bool capturing = capturingAllowed(ops, stream);
  std::lock_guard<std::mutex> lock(launchMutex_);
  try {
    enqueueLaunch(ops, stream, capturing);
  } catch (const Error& e) {
    // Half-enqueued work leaves the ranks out of step.
    failed(e);
    throw;
  }
}

// Staged work replays through its script. Two things cannot follow a replay: a
// domain of several GPUs (its steps run in the vendor library on the engine's
// stream, which HetCCL does not hand to the library's own capture), and the
// timeline (its events are read once per launch).
bool GpuPlanExecutor::capturingAllowed(const std::vector<Op>& ops,
                                       StreamHandle stream) const {
  int capturing = 0;
  module_.check(module_.api().streamIsCapturing(stream, &capturing),
                "asking whether the stream is being captured");
  if (!capturing) return false;
  const size_t domainSize = domains_.members(domains_.domainOf(rank_)).size();
  if (domainSize > 1)
    fail(ncclInvalidUsage,
         "rank %d: this launch of a heterogeneous communicator cannot be "
         "captured in a CUDA graph: the rank's domain has %zu GPUs, and "
         "HetCCL does not capture its domain's steps in the vendor library "
         "yet; only launches of ranks that are their domain's only GPU can "
         "be captured. Launch it outside the capture",
         rank_, domainSize);
  if (timeline_)
    fail(ncclInvalidUsage,
         "rank %d: this launch of a heterogeneous communicator cannot be "
         "captured in a CUDA graph while HETCCL_ENGINE_TIMELINE=1 (the "
         "timeline reads its events once per launch); unset it to capture",
         rank_);
  const GpuRuntime* runtime = findGpuRuntime(module_.runtimeName());
  if (runtime && !runtime->capturesStagedLaunches)
    fail(ncclInvalidUsage,
         "rank %d: this launch of a heterogeneous communicator cannot be "
         "captured in a %s graph: it goes through the staging proxy, and "
         "capturing the stream memory operations that start the proxy's "
         "part at each replay has not been run with %s yet. Launch it "
         "outside the capture",
         rank_, runtime->label, runtime->label);
  return true;
}

// Everything on this thread, before the call returns. A failure midway
// leaves half a plan enqueued, which launch() turns into an abort.
void GpuPlanExecutor::enqueueLaunch(const std::vector<Op>& ops,
                                    StreamHandle stream, bool capturing) {
  // A replay writes no sequence number: `done` counts the others only.
  const uint64_t sequence = capturing ? 0 : ++launched_;
  if (capturing && !perLaunch_) numberPiecesPerLaunch();
  if (timeline_) timeline_->beginLaunch();
  followCaller(stream, capturing, sequence);
  copies_.beginLaunch();
  std::unique_ptr<StagedLaunchScript> script =
      capturing ? startScript() : nullptr;
  launchGate_ = perLaunch_ && !script ? sequence : 0;
  for (auto& entry : stagedLinks_)
    entry.second->beginLaunch(perLaunch_, script.get());
  try {
    runPlans(context_, ops);
    if (domainSteps_) domainSteps_->endLaunch();
    // Every link's receives before any link's waits for its sends: a
    // link's sends are done only once its peer received them, which may
    // wait for another link's receive there.
    for (auto& entry : stagedLinks_) entry.second->enqueuePendingReceives();
    for (auto& entry : stagedLinks_) entry.second->finishLaunch();
    if (capturing) copies_.joinEngine();
  } catch (...) {
    // The stream may reach the script's start: the proxy must see it.
    if (script) proxy_.addScript(std::move(script));
    throw;
  }
  if (script) proxy_.addScript(std::move(script));
  if (timeline_) timeline_->endLaunch();
  releaseCaller(stream, capturing, sequence);
}

// From the first launch with a script on: every launch numbers its pieces
// from 0 and the stream puts the rings' counters back to 0 after it, so a
// replay finds them as its capture did; pieces posted at enqueue wait for
// their gate. The counters of the launches so far go to 0 first, from the
// engine's stream, outside any capture.
void GpuPlanExecutor::numberPiecesPerLaunch() {
  rings_.zeroCounters(stream_.handle());
  perLaunch_ = true;
}

// Sequence numbers outside a capture; inside, events, which a graph turns
// into its own dependencies.
void GpuPlanExecutor::followCaller(StreamHandle stream, bool capturing,
                                   uint64_t sequence) {
  const auto& api = module_.api();
  void* own = stream_.handle();
  if (capturing) {
    callerReached_.record(stream);
    module_.check(api.streamWaitEvent(own, callerReached_.handle()),
                  "joining the GPU engine's stream to the capture");
    return;
  }
  module_.check(api.writeValue64(stream, &flags_->inputsReady, sequence),
                "signalling the inputs of a launch");
  module_.check(api.waitValue64(own, &flags_->inputsReady, sequence),
                "waiting for the inputs of a launch");
  if (perLaunch_)
    module_.check(api.writeValue64(own, &flags_->engineReached, sequence),
                  "opening the gate of a launch's staged pieces");
}

void GpuPlanExecutor::releaseCaller(StreamHandle stream, bool capturing,
                                    uint64_t sequence) {
  const auto& api = module_.api();
  void* own = stream_.handle();
  if (capturing) {
    enginePassed_.record(own);
    module_.check(api.streamWaitEvent(stream, enginePassed_.handle()),
                  "joining the GPU engine's stream back into the capture");
    return;
  }
  module_.check(api.writeValue64(own, &flags_->done, sequence),
                "signalling the end of a launch");
  module_.check(api.waitValue64(stream, &flags_->done, sequence),
                "waiting for the GPU engine");
}

// The stream tells the proxy that it reached the script's launch.
std::unique_ptr<StagedLaunchScript> GpuPlanExecutor::startScript() {
  auto script = std::make_unique<StagedLaunchScript>(proxy_.takeControlWord());
  module_.check(module_.api().writeValue64(stream_.handle(), script->control(),
                                           StagedLaunchScript::kStart),
                "starting a launch's staged pieces");
  return script;
}

void GpuPlanExecutor::failed(const Error& error) {
  LOG_WARN(kLogColl, "rank %d: GPU engine: %s", rank_, error.what());
  abort_->raise(error.code(), error.what());
  if (onFailure_) onFailure_(error);
}

// The process exits with the communicator alive (no destroy): as a
// destroy would, it leaves cleanly if nothing is in flight, and otherwise
// lets its streams go so that the exit does not wait for them.
void GpuPlanExecutor::leaveAtExit() {
  if (!abort_->raised() && launchesIdle()) return;
  abort_->raise(ncclSystemError, "the process is exiting");
  releaseWaits();
}

// Every launch's work has passed the caller's stream.
bool GpuPlanExecutor::launchesIdle() const {
  std::lock_guard<std::mutex> lock(launchMutex_);
  return __atomic_load_n(&flags_->done, __ATOMIC_ACQUIRE) >= launched_;
}

// The stream writes `done` for the last launch (after its last piece was
// sent).
bool GpuPlanExecutor::drain(double timeoutSeconds) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutSeconds);
  uint64_t last;
  {
    std::lock_guard<std::mutex> lock(launchMutex_);
    last = launched_;
  }
  while (__atomic_load_n(&flags_->done, __ATOMIC_ACQUIRE) < last) {
    if (abort_->raised()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

// Also on the proxy's thread, so no device is made current here: the
// calls below take any. The vendor's abort frees pinned memory, which waits
// for the whole device, so no stream may still wait on a host word then:
// the engine's streams are released and run out their work first, then
// the callers' streams. A domain kernel waiting for a dead peer keeps the
// engine's streams busy until the vendor's abort ends it; they are waited
// for once more after it.
void GpuPlanExecutor::abort() {
  raiseEngineWaits();
  const bool idle = awaitStreamsIdle(kAbortDrainSeconds);
  raiseToAtLeast(&flags_->done, kReleaseAll);
  domainComm_->abort();
  if (!idle) releaseWaits();
}

// Every wait of the engine's streams ends first, and the streams run out
// what is queued (the staging copies into the callers' buffers among it)
// before the callers' streams go on and may free those buffers.
void GpuPlanExecutor::releaseWaits() {
  raiseEngineWaits();
  warnUnlessStreamsIdle();
  raiseToAtLeast(&flags_->done, kReleaseAll);
}

void GpuPlanExecutor::raiseEngineWaits() {
  raiseToAtLeast(&flags_->inputsReady, kReleaseAll);
  raiseToAtLeast(&flags_->engineReached, kReleaseAll);
  proxy_.release();
  rings_.releaseWaits();
}

void GpuPlanExecutor::warnUnlessStreamsIdle() const {
  if (!awaitStreamsIdle(kReleaseDrainSeconds))
    LOG_WARN(kLogColl,
             "rank %d: the GPU engine's streams still run %g s after their "
             "waits were released; releasing the callers' streams anyway",
             rank_, kReleaseDrainSeconds);
}

bool GpuPlanExecutor::awaitStreamsIdle(double seconds) const {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int idle = 0;
    if (module_.api().streamQuery(stream_.handle(), &idle) != 0 ||
        (idle && copies_.idle()))
      return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace hetccl
