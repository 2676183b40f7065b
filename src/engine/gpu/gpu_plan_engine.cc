#include "engine/gpu/gpu_plan_engine.h"

#include <chrono>
#include <limits>
#include <thread>

#include "algo/pipeline.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

constexpr uint64_t kReleaseAll = std::numeric_limits<uint64_t>::max();

// A compare-and-swap loop: the stream and abort() may both write, and a
// word must never go down (a stream that saw a value has passed it).
void raiseToAtLeast(uint64_t* word, uint64_t value) {
  uint64_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  while (seen < value &&
         !__atomic_compare_exchange_n(word, &seen, value, /*weak=*/true,
                                      __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
  }
}

const DeviceModule& onDevice(const DeviceModule& module, int device) {
  module.check(module.api().setDevice(device), "making the rank's GPU current");
  // Before any stream can be held back by a host word (see loadKernels).
  module.check(module.api().loadKernels(), "loading the reduction kernels");
  return module;
}

// The most scratch any plan asks for: two steps of the reduce-scatter's
// laid-out input, partial and one partial per domain.
size_t scratchBytes(const GpuPlanEngineSetup& setup) {
  return 2 * (setup.domains.count() + 2) * setup.settings.chunkBytes;
}

}  // namespace

GpuPlanEngine::GpuPlanEngine(GpuPlanEngineSetup setup)
    : module_(onDevice(setup.module, setup.device)),
      device_(setup.device),
      rank_(setup.rank),
      domains_(setup.domains),
      domainComm_(std::move(setup.domainComm)),
      abort_(std::move(setup.abort)),
      timeoutSeconds_(setup.settings.timeoutSeconds),
      flagMemory_(module_, sizeof(Flags)),
      flags_(reinterpret_cast<Flags*>(flagMemory_.data())),
      stream_(module_),
      progress_(module_, stream_.handle()),
      pool_(module_, progress_,
            crossDomainBytesInFlight(setup.settings.chunkBytes,
                                     setup.domains.nranks()),
            rank_),
      data_(module_, stream_.handle(), scratchBytes(setup)),
      links_(std::move(setup.links)),
      proxy_(progress_, pool_, abort_),
      directCollectives_(std::move(setup.directCollectives)) {
  __atomic_store_n(&flags_->inputsReady, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&flags_->done, 0, __ATOMIC_RELEASE);
  StagingPath path{module_, stream_.handle(), progress_,      pool_,
                   proxy_,  *abort_,          timeoutSeconds_};
  for (int peer = 0; peer < domains_.nranks(); ++peer)
    if (domains_.domainOf(peer) != domains_.domainOf(rank_))
      stagedLinks_[peer] =
          std::make_unique<StagedLink>(links_->shared(peer), path);
  context_.rank = rank_;
  context_.nranks = domains_.nranks();
  context_.domains = &domains_;
  context_.domainComm = domainComm_.get();
  context_.domainStream = static_cast<StreamHandle>(stream_.handle());
  context_.linkTo = [this](int peer) -> Link& {
    auto it = stagedLinks_.find(peer);
    if (it == stagedLinks_.end())
      fail(ncclInternalError, "rank %d has no link to rank %d", rank_, peer);
    return *it->second;
  };
  context_.abort = abort_.get();
  context_.timeoutSeconds = timeoutSeconds_;
  context_.chunkBytes = setup.settings.chunkBytes;
  context_.data = &data_;
  warmUpDomain();
  planner_.enqueue([this] {
    module_.check(module_.api().setDevice(device_),
                  "making the rank's GPU current on the planner");
  });
  LOG_INFO(
      kLogInit,
      "rank %d: GPU engine: domain %d of %d (local rank %d of %zu), "
      "domain steps on the vendor library, links: %s%s",
      rank_, domains_.domainOf(rank_), domains_.count(),
      domains_.localRank(rank_),
      domains_.members(domains_.domainOf(rank_)).size(),
      links_->summary().c_str(),
      directCollectives_ ? "; stream-driven shared-memory collectives" : "");
}

// The vendor library connects its ranks on their first collective and on
// the first send to each peer, allocating memory as it does. That must
// happen now, while no caller's stream waits for the engine: an allocation
// then would serialise the GPU's streams (CUDA's implicit synchronisation)
// and deadlock them. One all-reduce and one exchange with every member of
// the domain, on the engine's stream, and wait.
void GpuPlanEngine::warmUpDomain() {
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

GpuPlanEngine::~GpuPlanEngine() {
  try {
    planner_.synchronize();  // plans catch their own errors
  } catch (const Error& e) {
    LOG_WARN(kLogColl, "rank %d: the GPU engine's planner failed: %s", rank_,
             e.what());
  }
  if (abort_->raised()) releaseWaits();
  if (module_.api().streamSynchronize(stream_.handle()) != 0)
    LOG_WARN(kLogColl, "rank %d: the GPU engine's stream failed", rank_);
  releaseWaits();  // a caller's stream may still wait for a launch
}

void GpuPlanEngine::launch(const std::vector<Op>& ops, StreamHandle stream) {
  abort_->throwIfRaised();
  checkNotCapturing(stream);
  std::lock_guard<std::mutex> lock(launchMutex_);
  try {
    if (directCollectives_ && directCollectives_->handles(ops))
      directCollectives_->launch(ops[0], stream);
    else
      enqueueLaunch(ops, stream);
  } catch (const Error& e) {
    // Half-enqueued work leaves the ranks out of step.
    abort_->raise(e.code(), e.what());
    abort();
    throw;
  }
}

// The planner cannot follow a graph's replays: each launch is matched by
// one run of the plan, so a captured launch is refused up front.
void GpuPlanEngine::checkNotCapturing(StreamHandle stream) const {
  int capturing = 0;
  module_.check(module_.api().streamIsCapturing(stream, &capturing),
                "asking whether the stream is being captured");
  if (capturing)
    fail(ncclInvalidUsage,
         "rank %d: collectives of a heterogeneous communicator on GPU "
         "buffers cannot be captured in a CUDA graph (a planner thread "
         "enqueues them, once per launch); launch them outside the capture",
         rank_);
}

void GpuPlanEngine::enqueueLaunch(const std::vector<Op>& ops,
                                  StreamHandle stream) {
  const auto& api = module_.api();
  const uint64_t sequence = ++launched_;
  module_.check(api.writeValue64(stream, &flags_->inputsReady, sequence),
                "signalling the inputs of a launch");
  // Planned before the stream waits: a stream that runs its work as it is
  // enqueued (the emulated module's null stream) waits right here.
  planner_.enqueue([this, sequence, ops, ticket = planned_.begin()] {
    plan(sequence, ops);
  });
  module_.check(api.waitValue64(stream, &flags_->done, sequence),
                "waiting for the GPU engine");
}

// On the planner thread. The caller's stream waits for `done` whatever
// happens: on failure the abort releases it (the communicator's error
// then says what went wrong).
void GpuPlanEngine::plan(uint64_t sequence, const std::vector<Op>& ops) {
  const auto& api = module_.api();
  void* stream = stream_.handle();
  try {
    abort_->throwIfRaised();
    module_.check(api.waitValue64(stream, &flags_->inputsReady, sequence),
                  "waiting for the inputs of a launch");
    runPlans(context_, ops);
    module_.check(api.writeValue64(stream, &flags_->done, sequence),
                  "signalling the end of a launch");
  } catch (...) {
    Error error = currentExceptionAsError();
    LOG_WARN(kLogColl, "rank %d: GPU engine launch %llu failed: %s", rank_,
             static_cast<unsigned long long>(sequence), error.what());
    abort_->raise(error.code(), error.what());
    abort();
    // Writes of `done` by earlier launches may still be queued on the
    // stream and would lower the word again: the last write releases all.
    api.writeValue64(stream, &flags_->done, kReleaseAll);
  }
}

// Every launch's planning ends, and the stream writes `done` for the last
// one.
bool GpuPlanEngine::drain(double timeoutSeconds) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutSeconds);
  if (!planned_.drain(timeoutSeconds)) return false;
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

void GpuPlanEngine::abort() {
  domainComm_->abort();
  releaseWaits();
}

void GpuPlanEngine::releaseWaits() {
  raiseToAtLeast(&flags_->inputsReady, kReleaseAll);
  raiseToAtLeast(&flags_->done, kReleaseAll);
  if (directCollectives_) directCollectives_->releaseWaits();
}

}  // namespace hetccl
