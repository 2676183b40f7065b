// All-gather across domains: every block crosses to every other domain
// once, cut into one piece per rank there so that all of that domain's
// ranks share the receiving; then each domain all-gathers the pieces of
// each block it received and broadcasts every block of its own ranks from
// the rank that holds it.
// Chunked: one chunk's pieces travel while the previous chunk is
// broadcast.
#include <cstring>

#include "algo/domain_steps.h"
#include "algo/ownership.h"
#include "algo/pipeline.h"
#include "algo/plan_choice.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// Posts the pieces of elements [offset, offset + n) of every block. This
// rank's own pieces are read from its input in place, so the copy of its
// block into the output overlaps their travel.
Transfers sendPieces(const PlanContext& ctx, const Op& op, size_t offset,
                     size_t n) {
  size_t elt = dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  auto* send = static_cast<const char*>(op.sendbuff);
  Transfers across;
  for (int q = 0; q < ctx.nranks; ++q) {
    int source = ctx.domains->domainOf(q);
    for (int d = 0; d < ctx.domains->count(); ++d) {
      if (d == source || (q != ctx.rank && d != ctx.domain())) continue;
      const std::vector<int>& receivers = ctx.domains->members(d);
      int pieces = static_cast<int>(receivers.size());
      for (int j = 0; j < pieces; ++j) {
        ElementRange range = ownedRange(n, pieces, j);
        const size_t bytes = range.size() * elt;
        if (q == ctx.rank)
          across.push_back(ctx.sendTo(
              receivers[j], send + (offset + range.begin) * elt, bytes));
        else if (receivers[j] == ctx.rank)
          across.push_back(ctx.recvFrom(
              q, recv + (q * op.count + offset + range.begin) * elt, bytes));
      }
    }
  }
  return across;
}

// Spreads, inside the domain, every block's elements [offset, offset+n):
// a block of this domain's from the rank that holds it (a broadcast), a
// block of another domain's from the ranks that received its pieces (an
// all-gather of the pieces, which lie side by side, and a broadcast of the
// last rank's longer one).
void spreadInDomain(const PlanContext& ctx, const Op& op, size_t offset,
                    size_t n) {
  size_t elt = dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  std::vector<Op> steps;
  for (int q = 0; q < ctx.nranks; ++q) {
    char* chunk = recv + (q * op.count + offset) * elt;
    if (ctx.domains->domainOf(q) != ctx.domain()) {
      for (const Op& step : gatherSteps(ctx, op, chunk, n))
        steps.push_back(step);
      continue;
    }
    if (n == 0 || ctx.domainSize() == 1) continue;
    steps.push_back(domainOp(OpKind::Broadcast, op, chunk, chunk, n,
                             ctx.domains->localRank(q)));
  }
  if (!steps.empty()) ctx.inDomain(steps);
}

}  // namespace

void allGatherPlan(const PlanContext& ctx, const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  const PlanChoice choice = choosePlan(ctx, op);
  if (choice.plan == PlanChoice::Plan::OneShot)
    return allGatherOneShotPlan(ctx, op);
  char* own = static_cast<char*>(op.recvbuff) + ctx.rank * op.count * elt;
  auto* send = static_cast<const char*>(op.sendbuff);
  pipelineChunks(
      ctx, op.count, choice.chunkElements,
      [&](size_t offset, size_t n) {
        Transfers across = sendPieces(ctx, op, offset, n);
        // While the chunk travels; its spread inside the domain reads it.
        if (own != send)
          ctx.data->copy(own + offset * elt, send + offset * elt, n * elt);
        return across;
      },
      [&](size_t offset, size_t n) { spreadInDomain(ctx, op, offset, n); });
}

}  // namespace hetccl
