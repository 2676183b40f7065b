// All-to-all, gather and scatter across domains are point-to-point
// patterns: every block goes straight from its source to its destination,
// which is the least any plan can move across domains.
#include <algorithm>
#include <vector>

#include "algo/pipeline.h"
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
  sendRecvPlan(ctx, ops, PeerReach::kEveryRank);
}

// Elements [first, first + n) of every block: rank p gets n elements at
// send + p * sendStride (elements), and what rank p sends lands in block p
// of the output at `first`.
void exchangeColumns(const PlanContext& ctx, const Op& op, const char* send,
                     size_t sendStride, size_t first, size_t n) {
  const size_t elt = dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  std::vector<Op> ops;
  for (int peer = 0; peer < ctx.nranks; ++peer) {
    ops.push_back(pointToPoint(OpKind::Send, op, send + peer * sendStride * elt,
                               n, peer));
    ops.push_back(pointToPoint(
        OpKind::Recv, op, recv + (peer * op.count + first) * elt, n, peer));
  }
  sendRecvPlan(ctx, ops, PeerReach::kEveryRank);
}

}  // namespace

// In place, what a rank receives overwrites what it has still to send: the
// blocks go column slice by column slice, each slice first copied aside.
void allToAllPlan(const PlanContext& ctx, const Op& op) {
  if (op.sendbuff != op.recvbuff) {
    exchangeColumns(ctx, op, static_cast<const char*>(op.sendbuff), op.count, 0,
                    op.count);
    return;
  }
  const size_t elt = dtypeSize(op.dtype);
  const size_t slice = elementsPerChunk(ctx.chunkBytes, elt, ctx.nranks);
  auto* data = static_cast<const char*>(op.recvbuff);
  for (size_t first = 0; first < op.count; first += slice) {
    size_t n = std::min(slice, op.count - first);
    char* aside = ctx.scratchBytes(ctx.nranks * n * elt);
    for (int p = 0; p < ctx.nranks; ++p)
      ctx.data->copy(aside + p * n * elt, data + (p * op.count + first) * elt,
                     n * elt);
    exchangeColumns(ctx, op, aside, n, first, n);
  }
}

void gatherPlan(const PlanContext& ctx, const Op& op) {
  rootedPlan(ctx, op, OpKind::Recv, op.recvbuff, op.sendbuff);
}

void scatterPlan(const PlanContext& ctx, const Op& op) {
  rootedPlan(ctx, op, OpKind::Send, op.sendbuff, op.recvbuff);
}

}  // namespace hetccl
