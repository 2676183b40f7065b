#include "algo/hetero_executor.h"

#include <chrono>

#include "runtime/runtime.h"
#include "transport/transport_registry.h"
#include "util/error.h"
#include "util/log.h"
#include "vendor/op_traits.h"

namespace hetccl {
std::shared_ptr<HeteroExecutor> HeteroExecutor::create(
    Oob& oob, const std::vector<RankPlacement>& placements,
    const Settings& settings, std::shared_ptr<Executor> domainComm,
    std::shared_ptr<AbortSignal> abort,
    std::shared_ptr<const PeerLiveness> liveness) {
  return std::shared_ptr<HeteroExecutor>(
      new HeteroExecutor(oob, placements, settings, std::move(domainComm),
                         std::move(abort), std::move(liveness)));
}

HeteroExecutor::HeteroExecutor(Oob& oob,
                               const std::vector<RankPlacement>& placements,
                               const Settings& settings,
                               std::shared_ptr<Executor> domainComm,
                               std::shared_ptr<AbortSignal> abort,
                               std::shared_ptr<const PeerLiveness> liveness)
    : rank_(oob.rank()),
      nranks_(oob.nranks()),
      domains_(placements),
      domainComm_(std::move(domainComm)),
      abort_(std::move(abort)) {
  connectLinks(oob, placements, settings, std::move(liveness));
  context_.rank = rank_;
  context_.nranks = nranks_;
  context_.domains = &domains_;
  context_.domainComm = domainComm_.get();
  context_.domainStream = nullptr;
  context_.linkTo = [this](int peer) -> Link& { return linkTo(peer); };
  context_.abort = abort_.get();
  context_.timeoutSeconds = settings.timeoutSeconds;
  context_.chunkBytes = settings.chunkBytes;
  context_.scratch = &scratch_;
  LOG_INFO(kLogInit,
           "rank %d: heterogeneous communicator, %d domains, this rank in "
           "domain %d (local rank %d of %zu), links: %s",
           rank_, domains_.count(), domains_.domainOf(rank_),
           domains_.localRank(rank_),
           domains_.members(domains_.domainOf(rank_)).size(),
           linkSummary_.c_str());
}

HeteroExecutor::~HeteroExecutor() = default;

// Each peer of another domain gets the transport the selection picks for
// it; every registered transport is connected, since connecting is
// collective, even by the ranks that need none of its links.
void HeteroExecutor::connectLinks(
    Oob& oob, const std::vector<RankPlacement>& placements,
    const Settings& settings, std::shared_ptr<const PeerLiveness> liveness) {
  auto selection = TransportSelection::parse(settings.transport);
  std::map<const Transport*, std::vector<int>> peersOf;
  for (int r = 0; r < nranks_; ++r) {
    if (domains_.domainOf(r) == domains_.domainOf(rank_)) continue;
    bool sameHost = placements[r].hostId == placements[rank_].hostId;
    peersOf[&selection.choose(sameHost)].push_back(r);
  }
  for (const Transport* transport : registeredTransports()) {
    const std::vector<int>& peers = peersOf[transport];
    linkSets_.push_back(
        transport->connect({oob, settings, peers, abort_, liveness}));
    for (int peer : peers) links_[peer] = linkSets_.back()->link(peer);
    linkSummary_ += format("%s%zu %s", linkSummary_.empty() ? "" : ", ",
                           peers.size(), transport->name());
  }
}

Link& HeteroExecutor::linkTo(int peer) const {
  auto it = links_.find(peer);
  if (it == links_.end())
    fail(ncclInternalError, "rank %d has no link to rank %d", rank_, peer);
  return *it->second;
}

void HeteroExecutor::launch(const std::vector<Op>& ops, StreamHandle stream) {
  // As HostComm::launch: the task keeps the executor alive, the ticket
  // counts it until it is gone.
  auto self = shared_from_this();
  hostRuntime().enqueue(
      stream, [self, ops, ticket = inflight_.begin()] { self->execute(ops); });
}

bool HeteroExecutor::drain(double timeoutSeconds) {
  return inflight_.drain(timeoutSeconds);
}

// Collectives run in call order, then the group's point-to-point ops
// together, as on a single domain.
void HeteroExecutor::execute(const std::vector<Op>& ops) {
  abort_->throwIfRaised();
  std::lock_guard<std::mutex> lock(planMutex_);
  try {
    std::vector<Op> pointToPoint;
    for (const Op& op : ops) {
      if (isPointToPoint(op.kind))
        pointToPoint.push_back(op);
      else
        runPlan(op);
    }
    if (!pointToPoint.empty()) sendRecvPlan(context_, pointToPoint);
  } catch (...) {
    Error error = currentExceptionAsError();
    abort_->raise(error.code(), error.what());
    throw error;
  }
}

void HeteroExecutor::runPlan(const Op& op) {
  switch (op.kind) {
    case OpKind::AllReduce:
      return allReducePlan(context_, op);
    case OpKind::AllGather:
      return allGatherPlan(context_, op);
    case OpKind::Broadcast:
      return broadcastPlan(context_, op);
    case OpKind::Reduce:
      return reducePlan(context_, op);
    case OpKind::ReduceScatter:
      return reduceScatterPlan(context_, op);
    case OpKind::AlltoAll:
      return allToAllPlan(context_, op);
    case OpKind::Gather:
      return gatherPlan(context_, op);
    case OpKind::Scatter:
      return scatterPlan(context_, op);
    case OpKind::Send:
    case OpKind::Recv:
      fail(ncclInternalError, "no plan for %s", opKindName(op.kind));
  }
}

size_t HeteroExecutor::bytesSent() const {
  size_t total = 0;
  for (const auto& entry : links_) total += entry.second->bytesSent();
  return total;
}

size_t HeteroExecutor::bytesReceived() const {
  size_t total = 0;
  for (const auto& entry : links_) total += entry.second->bytesReceived();
  return total;
}

}  // namespace hetccl
