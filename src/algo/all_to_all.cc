// All-to-all, gather and scatter across domains are point-to-point
// patterns: every block goes straight from its source to its destination,
// which is the least any plan can move across domains.
#include <vector>

#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// Gather and scatter mirror each other: the root exchanges block r of its
// `blocks` with rank r (`rootKind`), and every rank, the root included,
// exchanges its own buffer with the root the other way.
void rootedPlan(const PlanContext& ctx, const Op& op, OpKind rootKind,
                const void* blocks, const void* own) {
  const OpKind ownKind = rootKind == OpKind::Send ? OpKind::Recv : OpKind::Send;
  const size_t block = op.count * dtypeSize(op.dtype);
  std::vector<Op> ops{pointToPoint(ownKind, op, own, op.count, op.root)};
  if (ctx.rank == op.root) {
    for (int peer = 0; peer < ctx.nranks; ++peer)
      ops.push_back(pointToPoint(
          rootKind, op, static_cast<const char*>(blocks) + peer * block,
          op.count, peer));
  }
  sendRecvPlan(ctx, ops);
}

}  // namespace

void allToAllPlan(const PlanContext& ctx, const Op& op) {
  const size_t block = op.count * dtypeSize(op.dtype);
  auto* send = static_cast<const char*>(op.sendbuff);
  auto* recv = static_cast<char*>(op.recvbuff);
  std::vector<Op> ops;
  for (int peer = 0; peer < ctx.nranks; ++peer) {
    ops.push_back(
        pointToPoint(OpKind::Send, op, send + peer * block, op.count, peer));
    ops.push_back(
        pointToPoint(OpKind::Recv, op, recv + peer * block, op.count, peer));
  }
  sendRecvPlan(ctx, ops);
}

void gatherPlan(const PlanContext& ctx, const Op& op) {
  rootedPlan(ctx, op, OpKind::Recv, op.recvbuff, op.sendbuff);
}

void scatterPlan(const PlanContext& ctx, const Op& op) {
  rootedPlan(ctx, op, OpKind::Send, op.sendbuff, op.recvbuff);
}

}  // namespace hetccl
