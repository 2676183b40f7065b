// Broadcast across domains: the root's domain broadcasts first; then, for
// every other domain, the data is cut into as many pieces as the larger of
// the two domains has ranks, so that every rank on both sides takes its
// turn, and each domain broadcasts every piece from the rank that received
// it. Chunked: one chunk's pieces travel while the next chunk is broadcast
// in the root's domain and the previous one in the others.
#include <algorithm>

#include "algo/ownership.h"
#include "algo/pipeline.h"
#include "algo/plan_choice.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

int piecesFor(const PlanContext& ctx, int rootDomain, int domain) {
  return static_cast<int>(std::max(ctx.domains->members(rootDomain).size(),
                                   ctx.domains->members(domain).size()));
}

Op broadcastOf(const Op& op, size_t offset, size_t n, int localRoot) {
  Op piece = op;
  piece.kind = OpKind::Broadcast;
  piece.sendbuff =
      static_cast<char*>(op.recvbuff) + offset * dtypeSize(op.dtype);
  piece.recvbuff = const_cast<void*>(piece.sendbuff);
  piece.count = n;
  piece.root = localRoot;
  return piece;
}

// The chunk inside the root's domain, from the root's send buffer.
void broadcastFromRoot(const PlanContext& ctx, const Op& op, size_t offset,
                       size_t n) {
  size_t elt = dtypeSize(op.dtype);
  Op local = op;
  local.sendbuff = static_cast<const char*>(op.sendbuff) + offset * elt;
  local.recvbuff = static_cast<char*>(op.recvbuff) + offset * elt;
  local.count = n;
  local.root = ctx.domains->localRank(op.root);
  ctx.inDomain(local);
}

// The root's domain broadcasts the chunk; then pieces go to the others.
// The root's own pieces are read from its send buffer, so a root alone in
// its domain copies the chunk into its output while they travel, as the
// plan's own copy (which a CPU rank shares with its helper threads; the
// domain's step would copy on one thread).
Transfers startChunk(const PlanContext& ctx, const Op& op, size_t offset,
                     size_t n) {
  size_t elt = dtypeSize(op.dtype);
  int rootDomain = ctx.domains->domainOf(op.root);
  const std::vector<int>& senders = ctx.domains->members(rootDomain);
  const bool rootAlone = senders.size() == 1;
  if (ctx.domain() == rootDomain && !rootAlone)
    broadcastFromRoot(ctx, op, offset, n);
  auto* recv = static_cast<char*>(op.recvbuff);
  auto* send = static_cast<const char*>(op.sendbuff);
  Transfers across;
  for (int d = 0; d < ctx.domains->count(); ++d) {
    if (d == rootDomain) continue;
    const std::vector<int>& receivers = ctx.domains->members(d);
    int pieces = piecesFor(ctx, rootDomain, d);
    for (int j = 0; j < pieces; ++j) {
      ElementRange range = ownedRange(n, pieces, j);
      int sender = senders[j % senders.size()];
      int receiver = receivers[j % receivers.size()];
      const size_t at = (offset + range.begin) * elt;
      const size_t bytes = range.size() * elt;
      if (sender == ctx.rank)
        across.push_back(ctx.sendTo(
            receiver, (sender == op.root ? send : recv) + at, bytes));
      if (receiver == ctx.rank)
        across.push_back(ctx.recvFrom(sender, recv + at, bytes));
    }
  }
  if (rootAlone && ctx.rank == op.root && send != recv)
    ctx.data->copy(recv + offset * elt, send + offset * elt, n * elt);
  return across;
}

// Outside the root's domain: every piece from the rank that received it.
void spreadInDomain(const PlanContext& ctx, const Op& op, size_t offset,
                    size_t n) {
  int rootDomain = ctx.domains->domainOf(op.root);
  if (ctx.domain() == rootDomain) return;
  std::vector<Op> broadcasts;
  int pieces = piecesFor(ctx, rootDomain, ctx.domain());
  for (int j = 0; j < pieces; ++j) {
    ElementRange range = ownedRange(n, pieces, j);
    if (range.size() > 0)
      broadcasts.push_back(broadcastOf(op, offset + range.begin, range.size(),
                                       j % ctx.domainSize()));
  }
  ctx.inDomain(broadcasts);
}

}  // namespace

void broadcastPlan(const PlanContext& ctx, const Op& op) {
  const PlanChoice choice = choosePlan(ctx, op);
  if (choice.plan == PlanChoice::Plan::OneShot)
    return broadcastOneShotPlan(ctx, op);
  pipelineChunks(
      ctx, op.count, choice.chunkElements,
      [&](size_t offset, size_t n) { return startChunk(ctx, op, offset, n); },
      [&](size_t offset, size_t n) { spreadInDomain(ctx, op, offset, n); });
}

}  // namespace hetccl
