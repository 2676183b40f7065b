// Point-to-point routing: peers in this rank's domain are reached through
// the domain communicator, peers elsewhere through links. Transfers across
// domains are posted first and only waited for after the domain's own
// group is done, so no rank waits for another while holding back a
// transfer that one needs.
#include <algorithm>

#include "algo/pipeline.h"
#include "algo/plan_context.h"
#include "algo/self_transfers.h"
#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {

Op pointToPoint(OpKind kind, const Op& user, const void* data, size_t count,
                int peer) {
  Op op = user;
  op.kind = kind;
  op.sendbuff = kind == OpKind::Send ? data : nullptr;
  op.recvbuff = kind == OpKind::Recv ? const_cast<void*>(data) : nullptr;
  op.count = count;
  op.root = peer;
  return op;
}

namespace {

// Copies the group's transfers of this rank to itself; returns the others.
std::vector<Op> copySelfTransfers(const PlanContext& ctx,
                                  const std::vector<Op>& ops) {
  SelfTransfers self = splitSelfTransfers(ctx.rank, ops);
  for (const SelfCopy& copy : self.copies)
    ctx.data->copy(copy.to, copy.from, copy.bytes);
  return std::move(self.others);
}

}  // namespace

// Transfers across domains go in pieces (pointToPointPieceBytes), both
// sides cutting alike, round by round: round r posts piece r of every
// transfer and then waits for round r-1, so one piece is on the wire
// while the next one is copied (GPU buffers), and no more than two rounds
// hold staging. The domain's own group runs once the first round is
// posted.
void sendRecvPlan(const PlanContext& ctx, const std::vector<Op>& ops,
                  PeerReach reach) {
  std::vector<Op> inDomain, across;
  for (const Op& op : copySelfTransfers(ctx, ops)) {
    if (ctx.domains->domainOf(op.root) != ctx.domain()) {
      across.push_back(op);
      continue;
    }
    Op local = op;
    local.root = ctx.domains->localRank(op.root);
    inDomain.push_back(local);
  }
  auto postRound = [&](size_t round) {
    Transfers posted;
    for (const Op& op : across) {
      const size_t bytes = op.count * dtypeSize(op.dtype);
      const size_t step = pointToPointPieceBytes(
          ctx.chunkBytes, ctx.nranks, bytes, reach == PeerReach::kFewPeers);
      const size_t offset = round * step;
      if (offset >= bytes && round > 0) continue;  // one round for 0 bytes
      const size_t piece = std::min(step, bytes - offset);
      Link& link = ctx.linkTo(op.root);
      const CallSignature call = ctx.callOf(op);
      if (op.kind == OpKind::Send)
        posted.push_back(link.send(
            static_cast<const char*>(op.sendbuff) + offset, piece, call));
      else
        posted.push_back(
            link.recv(static_cast<char*>(op.recvbuff) + offset, piece, call));
    }
    return posted;
  };
  Transfers previous = postRound(0);
  if (!inDomain.empty()) ctx.inDomain(inDomain);
  for (size_t round = 1; !previous.empty(); ++round) {
    Transfers posted = postRound(round);
    for (auto& request : previous) ctx.wait(request);
    previous = std::move(posted);
  }
}

std::vector<std::shared_ptr<TransferRequest>> startSendRecv(
    const PlanContext& ctx, const std::vector<Op>& ops) {
  std::vector<Op> inDomain;
  std::vector<std::shared_ptr<TransferRequest>> across;
  for (const Op& op : copySelfTransfers(ctx, ops)) {
    size_t bytes = op.count * dtypeSize(op.dtype);
    if (ctx.domains->domainOf(op.root) == ctx.domain()) {
      Op local = op;
      local.root = ctx.domains->localRank(op.root);
      inDomain.push_back(local);
    } else if (op.kind == OpKind::Send) {
      across.push_back(
          ctx.linkTo(op.root).send(op.sendbuff, bytes, ctx.callOf(op)));
    } else {
      across.push_back(
          ctx.linkTo(op.root).recv(op.recvbuff, bytes, ctx.callOf(op)));
    }
  }
  if (!inDomain.empty()) ctx.inDomain(inDomain);
  return across;
}

}  // namespace hetccl
