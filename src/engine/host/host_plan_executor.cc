#include "engine/host/host_plan_executor.h"

#include <algorithm>

#include "runtime/runtime.h"
#include "util/cpu_cores.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// HETCCL_HOST_THREADS's helpers beside the plan's thread; by default one
// thread per 2 cores of each of the domain's ranks (CPU domains never span
// hosts), at most 4: a CPU rank's link threads need cores too.
int helperThreads(int setting, size_t domainRanks) {
  constexpr int kCoresPerThread = 2;
  constexpr int kMaxAutoThreads = 4;
  if (setting > 0) return setting - 1;
  int perRank =
      availableCores() / static_cast<int>(std::max<size_t>(1, domainRanks));
  return std::clamp(perRank / kCoresPerThread, 1, kMaxAutoThreads) - 1;
}

}  // namespace

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
      data_(helperThreads(plans.hostThreads,
                          domains_.members(domains_.domainOf(rank)).size())),
      decisions_(rank, "links: " + links_->summary()) {
  context_.rank = rank;
  context_.nranks = domains_.nranks();
  context_.domains = &domains_;
  context_.domainComm = domainComm_.get();
  context_.domainStream = nullptr;
  context_.linkTo = [links = links_.get()](int peer) -> Link& {
    return links->to(peer);
  };
  context_.abort = abort_.get();
  context_.waiting = links_->waiting().get();
  context_.timeoutSeconds = timeoutSeconds;
  context_.chunkBytes = plans.chunkBytes;
  context_.oneShotMaxBytes = plans.oneShotMaxBytes;
  context_.data = &data_;
  context_.decisions = &decisions_;
}

HostPlanExecutor::~HostPlanExecutor() = default;

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

void HostPlanExecutor::execute(const std::vector<Op>& ops) {
  abort_->throwIfRaised();
  std::lock_guard<std::mutex> lock(planMutex_);
  try {
    runPlans(context_, ops);
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
