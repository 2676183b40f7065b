#include "engine/host/host_plan_executor.h"

#include "domain/host/host_comm.h"
#include "runtime/host/memory_workers.h"
#include "runtime/runtime.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {

std::shared_ptr<HostPlanExecutor> HostPlanExecutor::create(
    int rank, const DomainMap& domains, std::shared_ptr<CrossDomainLinks> links,
    const PlanSettings& plans, double timeoutSeconds,
    std::shared_ptr<Executor> domainComm, std::shared_ptr<AbortSignal> abort) {
  return std::shared_ptr<HostPlanExecutor>(new HostPlanExecutor(
      rank, domains, std::move(links), plans, timeoutSeconds,
      std::move(domainComm), std::move(abort)));
}

HostPlanExecutor::HostPlanExecutor(int rank, const DomainMap& domains,
                                   std::shared_ptr<CrossDomainLinks> links,
                                   const PlanSettings& plans,
                                   double timeoutSeconds,
                                   std::shared_ptr<Executor> domainComm,
                                   std::shared_ptr<AbortSignal> abort)
    : domains_(domains),
      links_(std::move(links)),
      domainComm_(std::move(domainComm)),
      abort_(std::move(abort)),
      timeline_(plans.timeline ? std::make_unique<HostTimeline>() : nullptr),
      timedDomainSteps_(timeline_ ? std::make_unique<TimedHostDomainSteps>(
                                        *domainComm_, *timeline_)
                                  : nullptr),
      data_(memoryHelpers(plans.hostThreads,
                          domains_.members(domains_.domainOf(rank)).size()),
            timeline_.get()),
      decisions_(rank, "links: " + links_->summary()) {
  context_.rank = rank;
  context_.nranks = domains_.nranks();
  context_.domains = &domains_;
  context_.domainComm = timedDomainSteps_
                            ? static_cast<Executor*>(timedDomainSteps_.get())
                            : domainComm_.get();
  context_.domainStream = nullptr;
  context_.linkTo = [links = links_.get()](int peer) -> Link& {
    return links->to(peer);
  };
  context_.abort = abort_.get();
  context_.waiting = links_->waiting().get();
  context_.timeoutSeconds = timeoutSeconds;
  context_.chunkBytes = plans.chunkBytes;
  context_.oneShotMaxBytes = plans.oneShotMaxBytes;
  context_.tuning = plans.tuning;
  context_.data = &data_;
  auto* hostComm = dynamic_cast<HostComm*>(domainComm_.get());
  context_.domainReadsBlocksApart = hostComm != nullptr;
  // A shm link without a progress thread moves only while its rank posts
  // or waits. A rank whose domain step waits for its domain peer must move
  // its own sends across meanwhile: a rank of the other domain may wait
  // for them, and that rank's domain peer for it, while this rank's peer
  // waits for that one (4 CPU ranks in 2 domains stopped so, on 2 cores).
  if (hostComm)
    hostComm->setWhileWaiting(
        [links = std::weak_ptr<CrossDomainLinks>(links_)] {
          if (auto held = links.lock()) held->poll();
        });
  context_.decisions = &decisions_;
  if (timeline_)
    context_.onWaited =
        [timeline = timeline_.get()](HostTimeline::Clock::duration elapsed) {
          timeline->add(HostPhase::TransferWaits, elapsed);
        };
}

// The plans are done by now: the communicator drained its launches.
HostPlanExecutor::~HostPlanExecutor() {
  if (timeline_)
    LOG_INFO(kLogTuning, "rank %d: host engine plan time: %s", context_.rank,
             timeline_->summary().c_str());
}

void HostPlanExecutor::launch(const std::vector<Op>& ops, StreamHandle stream) {
  // As HostComm::launch: the task keeps the executor alive, the ticket
  // counts it until it is gone.
  auto self = shared_from_this();
  hostRuntime().enqueue(
      stream, [self, ops, ticket = inflight_.begin()] { self->execute(ops); });
}

bool HostPlanExecutor::drain(double timeoutSeconds) {
  return inflight_.drain(timeoutSeconds);
}

ncclResult_t HostPlanExecutor::asyncError() const {
  links_->poll();
  ncclResult_t domain = domainComm_->asyncError();
  if (domain != ncclSuccess) return domain;
  return abort_->raised() ? abort_->code() : ncclSuccess;
}

double HostPlanExecutor::timeOneElementAllReduceUs(int rounds,
                                                   double timeoutSeconds) {
  float value = 0;
  const Op allReduce = oneElementAllReduce(&value);
  DecisionLog* decisions = context_.decisions;
  const double opTimeoutSeconds = context_.timeoutSeconds;
  context_.decisions = nullptr;
  // Init waits for a peer no longer than the bootstrap does.
  if (timeoutSeconds > 0) context_.timeoutSeconds = timeoutSeconds;
  const double fastestUs = fastestRunUs(rounds, [&] { execute({allReduce}); });
  context_.decisions = decisions;
  context_.timeoutSeconds = opTimeoutSeconds;
  links_->startCounting();
  return fastestUs;
}

// Its domain's host collectives on their own: an all-reduce of one float
// for their cost per call, and of 4 MiB (a chunk's order of size) for
// their bus bandwidth.
std::optional<LibraryCost> HostPlanExecutor::timeDomainLibrary(int rounds) {
  const size_t ranks =
      domains_.members(domains_.domainOf(context_.rank)).size();
  if (ranks < 2) return std::nullopt;
  constexpr size_t kProbeBytes = size_t{4} << 20;
  std::vector<float> buffer(kProbeBytes / sizeof(float));
  const auto allReduceUs = [&](size_t count) {
    Op op = oneElementAllReduce(buffer.data());
    op.count = count;
    return fastestRunUs(rounds, [&] { domainComm_->launch({op}, nullptr); });
  };
  const double alphaUs = allReduceUs(1);
  const double probeUs = allReduceUs(buffer.size());
  const double busBytes = 2.0 * (ranks - 1) / ranks * kProbeBytes;
  return LibraryCost{alphaUs,
                     busBytes / (std::max(probeUs - alphaUs, 1.0) * 1e3)};
}

void HostPlanExecutor::retune(const PlanSettings& plans) {
  std::lock_guard<std::mutex> lock(planMutex_);
  context_.tuning = plans.tuning;
  context_.oneShotMaxBytes = plans.oneShotMaxBytes;
}

void HostPlanExecutor::execute(const std::vector<Op>& ops) {
  abort_->throwIfRaised();
  std::lock_guard<std::mutex> lock(planMutex_);
  try {
    const auto start = HostTimeline::Clock::now();
    runPlans(context_, ops);
    if (timeline_) timeline_->addPlan(HostTimeline::Clock::now() - start);
  } catch (...) {
    Error error = currentExceptionAsError();
    abort_->raise(error.code(), error.what());
    // A cause the ranks share (announced, possibly by another rank) is
    // the cause of whatever failed after: a peer that exited once it knew
    // of the disagreement, a messenger's lost connection.
    if (AbortSignal::announced(abort_->code()))
      throw Error(abort_->code(), abort_->reason());
    throw error;
  }
}

}  // namespace hetccl
