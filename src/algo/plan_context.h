// What a heterogeneous plan works with: the communicator's domains, this
// rank's domain communicator (for the steps inside the domain), the links
// to ranks of other domains (for the steps across), and its data (where
// its own copies, reductions and scratch run: host or device).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "algo/domains.h"
#include "algo/plan_data.h"
#include "algo/plan_tuning.h"
#include "op/decision_log.h"
#include "op/executor.h"
#include "op/op_traits.h"
#include "op/waiting_call.h"
#include "transport/link.h"
#include "util/abort_signal.h"

namespace hetccl {

struct PlanContext {
  int rank = 0;
  int nranks = 0;
  const DomainMap* domains = nullptr;
  Executor* domainComm = nullptr;
  // Where the domain steps go; NULL runs them before the call returns,
  // which is what a plan already running on a host stream needs. The GPU
  // engine's stream otherwise.
  StreamHandle domainStream = nullptr;
  std::function<Link&(int peer)> linkTo;
  // The collective whose plan runs (runPlans sets it): every transfer of
  // the plan carries its signature, so that a peer whose call differs
  // fails instead of taking the bytes. None while a group's sends and
  // receives run: each of those carries its own.
  std::optional<CallSignature> call;
  const AbortSignal* abort = nullptr;
  double timeoutSeconds = 0;
  // Where the collective's waits for a peer are marked, for the call probe
  // (may be null).
  WaitingCall* waiting = nullptr;
  // The communicator's pipeline chunk: the largest a plan takes, and what
  // point-to-point transfers are cut by (pipeline.h).
  size_t chunkBytes = 0;
  // All-reduces of at most this many bytes, and all-gathers and
  // reduce-scatters of at most this many bytes of their larger buffer,
  // take their one-shot plans.
  size_t oneShotMaxBytes = 0;
  // Where set, the cut-off and chunk by collective and size instead of the
  // two above (plan_tuning.h).
  std::shared_ptr<const PlanTuning> tuning;
  PlanData* data = nullptr;
  // The domain communicator is the host collectives, whose reduce-scatter
  // reads input blocks that lie apart (Op::blockStride). The same on every
  // rank of a domain: a domain's ranks are all CPU ranks or all GPU ranks.
  bool domainReadsBlocksApart = false;
  // This rank's buffers, copies and reductions are a GPU's (the GPU
  // engine): a copy costs little beside the domain library's steps, where
  // a CPU rank's copies take the memory bandwidth its host collectives
  // need.
  bool dataOnGpu = false;
  // Where runPlans says which plan each kind and size class of op took
  // (null: nowhere).
  DecisionLog* decisions = nullptr;
  // Called by runPlans as the plan of `ops` starts (one collective, or a
  // group's sends and receives); may be empty.
  std::function<void(const std::vector<Op>& ops)> onPlanStart;
  // Told how long each wait for a transfer took (a CPU rank's timeline,
  // HETCCL_ENGINE_TIMELINE); may be empty.
  std::function<void(std::chrono::steady_clock::duration)> onWaited;

  int domain() const { return domains->domainOf(rank); }
  int domainSize() const {
    return static_cast<int>(domains->members(domain()).size());
  }
  int localRank() const { return domains->localRank(rank); }
  // Runs one op on this rank's domain communicator; ranks in the op
  // (root, peer) are local ranks of the domain.
  void inDomain(const Op& op) const { domainComm->launch({op}, domainStream); }
  // Runs ops as one group on the domain communicator.
  void inDomain(const std::vector<Op>& ops) const {
    domainComm->launch(ops, domainStream);
  }
  // A transfer of the collective's plan to or from `peer`.
  std::shared_ptr<TransferRequest> sendTo(int peer, const void* data,
                                          size_t bytes) const {
    return linkTo(peer).send(data, bytes, call.value());
  }
  std::shared_ptr<TransferRequest> recvFrom(int peer, void* data,
                                            size_t bytes) const {
    return linkTo(peer).recv(data, bytes, call.value());
  }
  // The call a transfer of `op` belongs to: the collective's, or `op`'s own
  // in a group's sends and receives.
  CallSignature callOf(const Op& op) const {
    return call ? *call : signatureOf(op);
  }
  void wait(const std::shared_ptr<TransferRequest>& request) const {
    WaitLeg leg;
    leg.way = request->way();
    WaitScope marked(waiting, call ? call->sequence : 0, request->peer(), leg,
                     request.get());
    if (!onWaited) return request->wait(*abort, timeoutSeconds);
    const auto start = std::chrono::steady_clock::now();
    request->wait(*abort, timeoutSeconds);
    onWaited(std::chrono::steady_clock::now() - start);
  }
  // Whether the link from `peer` combines a receive with a local buffer as
  // it arrives (Link::recvReduce): a CPU rank's, where the link does.
  bool combinesOnReceive(int peer) const {
    return !dataOnGpu && linkTo(peer).reducesOnReceive();
  }
  // A receive from `peer` that ends as dst = local (op) incoming (or the
  // other order): on a link that combinesOnReceive.
  std::shared_ptr<TransferRequest> recvCombining(
      int peer, void* dst, const void* local, size_t bytes,
      const ReceiveCombine& combine) const {
    return linkTo(peer).recvReduce(dst, local, bytes, combine, call.value());
  }
  char* scratchBytes(size_t bytes) const { return data->scratch(bytes); }
  // The reduction of one value per domain, in domain order.
  void combine(void* dst, const void* const* sources, int nsources,
               size_t count, const Reduction& reduction) const {
    data->reduce(dst, sources, nsources, count, reduction);
  }
};

// Runs one launch's ops: collectives in call order, then the
// point-to-point ops of the group together.
void runPlans(const PlanContext& context, const std::vector<Op>& ops);

// Plans, one per collective.
void allReducePlan(const PlanContext& context, const Op& op);
void allReduceOneShotPlan(const PlanContext& context, const Op& op);
void allGatherPlan(const PlanContext& context, const Op& op);
void allGatherOneShotPlan(const PlanContext& context, const Op& op);
void broadcastPlan(const PlanContext& context, const Op& op);
void broadcastOneShotPlan(const PlanContext& context, const Op& op);
void reducePlan(const PlanContext& context, const Op& op);
void reduceOneShotPlan(const PlanContext& context, const Op& op);
void reduceScatterPlan(const PlanContext& context, const Op& op);
void reduceScatterOneShotPlan(const PlanContext& context, const Op& op);
void allToAllPlan(const PlanContext& context, const Op& op);
void gatherPlan(const PlanContext& context, const Op& op);
void scatterPlan(const PlanContext& context, const Op& op);
// The op of `user`'s plan that sends `count` elements at `data` to `peer`
// (kind Send) or receives them from `peer` (kind Recv).
Op pointToPoint(OpKind kind, const Op& user, const void* data, size_t count,
                int peer);
// Who a rank's point-to-point ops reach, which sets how sendRecvPlan cuts
// its transfers across domains (pipeline.h): a user's group of sends and
// receives a few peers, a collective made of them (all-to-all, gather,
// scatter) every rank. Both ends of a transfer run the same kind of group,
// so they cut it alike.
enum class PeerReach { kFewPeers, kEveryRank };
// The point-to-point ops of one group (peers are global ranks).
void sendRecvPlan(const PlanContext& context, const std::vector<Op>& ops,
                  PeerReach reach);
// The same in two halves: posts the transfers across domains and runs the
// ones inside the domain; the caller waits for the returned requests.
std::vector<std::shared_ptr<TransferRequest>> startSendRecv(
    const PlanContext& context, const std::vector<Op>& ops);

}  // namespace hetccl
