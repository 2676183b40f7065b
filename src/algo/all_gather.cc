// All-gather across domains: every block crosses to every other domain
// once, cut into one piece per rank there so that all of that domain's
// ranks share the receiving; then each domain broadcasts every piece it
// received, and every block of its own ranks, from the rank that holds it.
// Chunked: one chunk's pieces travel while the previous chunk is
// broadcast.
#include <cstring>

#include "algo/ownership.h"
#include "algo/pipeline.h"
#include "algo/plan_choice.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// Posts the pieces of elements [offset, offset + n) of every block.
Transfers sendPieces(const PlanContext& ctx, const Op& op, size_t offset,
                     size_t n) {
  size_t elt = dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  Transfers across;
  for (int q = 0; q < ctx.nranks; ++q) {
    int source = ctx.domains->domainOf(q);
    for (int d = 0; d < ctx.domains->count(); ++d) {
      if (d == source || (q != ctx.rank && d != ctx.domain())) continue;
      const std::vector<int>& receivers = ctx.domains->members(d);
      int pieces = static_cast<int>(receivers.size());
      for (int j = 0; j < pieces; ++j) {
        ElementRange range = ownedRange(n, pieces, j);
        char* data = recv + (q * op.count + offset + range.begin) * elt;
        if (q == ctx.rank)
          across.push_back(ctx.sendTo(receivers[j], data, range.size() * elt));
        else if (receivers[j] == ctx.rank)
          across.push_back(ctx.recvFrom(q, data, range.size() * elt));
      }
    }
  }
  return across;
}

// Broadcasts, inside the domain, every block's elements [offset, offset+n)
// from the rank that holds them.
void spreadInDomain(const PlanContext& ctx, const Op& op, size_t offset,
                    size_t n) {
  size_t elt = dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  std::vector<Op> broadcasts;
  for (int q = 0; q < ctx.nranks; ++q) {
    bool local = ctx.domains->domainOf(q) == ctx.domain();
    int pieces = local ? 1 : ctx.domainSize();
    for (int j = 0; j < pieces; ++j) {
      ElementRange range =
          local ? ElementRange{0, n} : ownedRange(n, pieces, j);
      if (range.size() == 0) continue;
      Op bcast = op;
      bcast.kind = OpKind::Broadcast;
      bcast.sendbuff = recv + (q * op.count + offset + range.begin) * elt;
      bcast.recvbuff = const_cast<void*>(bcast.sendbuff);
      bcast.count = range.size();
      bcast.root = local ? ctx.domains->localRank(q) : j;
      broadcasts.push_back(bcast);
    }
  }
  ctx.inDomain(broadcasts);
}

}  // namespace

void allGatherPlan(const PlanContext& ctx, const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  size_t block = op.count * elt;
  const PlanChoice choice = choosePlan(ctx, op);
  if (choice.plan == PlanChoice::Plan::OneShot)
    return allGatherOneShotPlan(ctx, op);
  char* own = static_cast<char*>(op.recvbuff) + ctx.rank * block;
  if (own != op.sendbuff) ctx.data->copy(own, op.sendbuff, block);
  pipelineChunks(
      ctx, op.count, choice.chunkElements,
      [&](size_t offset, size_t n) { return sendPieces(ctx, op, offset, n); },
      [&](size_t offset, size_t n) { spreadInDomain(ctx, op, offset, n); });
}

}  // namespace hetccl
