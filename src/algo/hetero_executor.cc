#include "algo/hetero_executor.h"

#include <chrono>

#include "runtime/runtime.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"
#include "util/env.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

enum class TransportChoice { Auto, Shm, Tcp };

// HETCCL_TRANSPORT=shm|tcp forces one transport for every cross-domain
// link (tcp between ranks of one host is how tests exercise it).
TransportChoice transportFromEnvironment() {
  std::string value = envString("HETCCL_TRANSPORT").value_or("auto");
  if (value == "auto") return TransportChoice::Auto;
  if (value == "shm") return TransportChoice::Shm;
  if (value == "tcp") return TransportChoice::Tcp;
  fail(ncclInvalidArgument,
       "HETCCL_TRANSPORT=\"%s\": expected auto, shm or tcp", value.c_str());
}

}  // namespace

std::shared_ptr<HeteroExecutor> HeteroExecutor::create(
    Oob& oob, const std::vector<RankPlacement>& placements,
    std::shared_ptr<Executor> domainComm, std::shared_ptr<AbortSignal> abort,
    std::shared_ptr<const PeerLiveness> liveness) {
  return std::shared_ptr<HeteroExecutor>(
      new HeteroExecutor(oob, placements, std::move(domainComm),
                         std::move(abort), std::move(liveness)));
}

HeteroExecutor::HeteroExecutor(Oob& oob,
                               const std::vector<RankPlacement>& placements,
                               std::shared_ptr<Executor> domainComm,
                               std::shared_ptr<AbortSignal> abort,
                               std::shared_ptr<const PeerLiveness> liveness)
    : rank_(oob.rank()),
      nranks_(oob.nranks()),
      domains_(placements),
      domainComm_(std::move(domainComm)),
      abort_(std::move(abort)) {
  TransportChoice choice = transportFromEnvironment();
  std::vector<int> shmPeers, tcpPeers;
  for (int r = 0; r < nranks_; ++r) {
    if (domains_.domainOf(r) == domains_.domainOf(rank_)) continue;
    bool sameHost = placements[r].hostId == placements[rank_].hostId;
    bool useShm = choice == TransportChoice::Shm ||
                  (choice == TransportChoice::Auto && sameHost);
    if (useShm && !sameHost)
      fail(ncclInvalidUsage,
           "HETCCL_TRANSPORT=shm, but rank %d is on another host than rank %d",
           r, rank_);
    (useShm ? shmPeers : tcpPeers).push_back(r);
  }
  // Both are collective: every rank builds both, even with no peers.
  shm_ = std::make_unique<ShmTransport>(oob, shmPeers, abort_, liveness);
  tcp_ = std::make_unique<TcpTransport>(oob, tcpPeers, abort_);
  for (int r : shmPeers) links_[r] = shm_->link(r);
  for (int r : tcpPeers) links_[r] = tcp_->link(r);

  context_.rank = rank_;
  context_.nranks = nranks_;
  context_.domains = &domains_;
  context_.domainComm = domainComm_.get();
  context_.domainStream = nullptr;
  context_.linkTo = [this](int peer) -> Link& { return linkTo(peer); };
  context_.abort = abort_.get();
  context_.timeoutSeconds = envSeconds("HETCCL_TIMEOUT", 0);
  context_.chunkBytes = static_cast<size_t>(
      std::max<int64_t>(4096, envInt("HETCCL_CHUNK", 4 << 20)));
  context_.scratch = &scratch_;
  LOG_INFO(kLogInit,
           "rank %d: heterogeneous communicator, %d domains, this rank in "
           "domain %d (local rank %d of %zu), %zu shm and %zu tcp links",
           rank_, domains_.count(), domains_.domainOf(rank_),
           domains_.localRank(rank_),
           domains_.members(domains_.domainOf(rank_)).size(), shmPeers.size(),
           tcpPeers.size());
}

HeteroExecutor::~HeteroExecutor() = default;

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
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv)
        pointToPoint.push_back(op);
      else
        runPlan(op);
    }
    if (!pointToPoint.empty()) sendRecvPlan(context_, pointToPoint);
  } catch (const Error& e) {
    abort_->raise(e.code(), e.what());
    throw;
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
    default:
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
