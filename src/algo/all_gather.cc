// All-gather across domains: every block crosses to every other domain
// once, in one of two ways:
//   - cut into one piece per rank there, so that all of that domain's
//     ranks share the receiving; the domain then all-gathers each block's
//     pieces;
//   - whole, to one rank there, when those pieces would be smaller than
//     the links cut transfers into (PiecedLink::kMinPieceBytes); the
//     blocks a domain takes in are dealt round-robin over its ranks, and
//     the domain broadcasts each from the rank that took it.
// Cutting keeps the domain's step an all-gather, which moves less than a
// broadcast; but it costs a transfer per rank of the other domain, so on
// many ranks the pieces shrink and their count grows with the ranks
// (hetccl-sim: 8,192 transfers per rank for 1 GB on 256 ranks). A whole
// block costs its sender one transfer per other domain, and the domains'
// ranks share the receiving.
// Each domain also broadcasts its own ranks' blocks from their owners.
// Chunked: one chunk's blocks travel while the previous chunk is spread.
#include <algorithm>

#include "algo/domain_steps.h"
#include "algo/ownership.h"
#include "algo/pieced_link.h"
#include "algo/pipeline.h"
#include "algo/plan_choice.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// How blocks of `bytes` (a chunk's) cross into domain d: cut into one
// piece per rank there, or whole.
bool crossInPieces(const DomainMap& domains, int d, size_t bytes) {
  return bytes / domains.members(d).size() >= PiecedLink::kMinPieceBytes;
}

// The rank of domain d that takes rank q's whole block (q not in d): the
// ranks outside d, in rank order, dealt over d's members in turn.
int receiverIn(const DomainMap& domains, int d, int q) {
  const std::vector<int>& members = domains.members(d);
  const auto membersBefore = static_cast<size_t>(
      std::lower_bound(members.begin(), members.end(), q) - members.begin());
  return members[(static_cast<size_t>(q) - membersBefore) % members.size()];
}

// Posts elements [offset, offset + n) of every block that crosses to or
// from this rank. Its own block is read from its input in place, so the
// copy of the block into the output overlaps the travel.
Transfers sendBlocks(const PlanContext& ctx, const Op& op, size_t offset,
                     size_t n) {
  const DomainMap& domains = *ctx.domains;
  const size_t elt = dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  auto* send = static_cast<const char*>(op.sendbuff) + offset * elt;
  Transfers across;
  for (int d = 0; d < domains.count(); ++d) {
    if (d == ctx.domain()) continue;
    if (!crossInPieces(domains, d, n * elt)) {
      across.push_back(
          ctx.sendTo(receiverIn(domains, d, ctx.rank), send, n * elt));
      continue;
    }
    const std::vector<int>& receivers = domains.members(d);
    const int pieces = static_cast<int>(receivers.size());
    for (int j = 0; j < pieces; ++j) {
      const ElementRange range = ownedRange(n, pieces, j);
      across.push_back(ctx.sendTo(receivers[j], send + range.begin * elt,
                                  range.size() * elt));
    }
  }
  const bool inPieces = crossInPieces(domains, ctx.domain(), n * elt);
  const ElementRange mine =
      ownedRange(n, ctx.domainSize(), domains.localRank(ctx.rank));
  for (int q = 0; q < ctx.nranks; ++q) {
    if (domains.domainOf(q) == ctx.domain()) continue;
    char* block = recv + (q * op.count + offset) * elt;
    if (inPieces)
      across.push_back(
          ctx.recvFrom(q, block + mine.begin * elt, mine.size() * elt));
    else if (receiverIn(domains, ctx.domain(), q) == ctx.rank)
      across.push_back(ctx.recvFrom(q, block, n * elt));
  }
  return across;
}

// Spreads, inside the domain, every block's elements [offset, offset+n):
// a block of this domain's from the rank that holds it (a broadcast), a
// block of another domain's from the ranks that received it: an all-gather
// of its pieces (which lie side by side) and a broadcast of the last
// rank's longer one, or a broadcast of the whole block.
void spreadInDomain(const PlanContext& ctx, const Op& op, size_t offset,
                    size_t n) {
  if (n == 0 || ctx.domainSize() == 1) return;
  const DomainMap& domains = *ctx.domains;
  const size_t elt = dtypeSize(op.dtype);
  const bool inPieces = crossInPieces(domains, ctx.domain(), n * elt);
  auto* recv = static_cast<char*>(op.recvbuff);
  std::vector<Op> steps;
  for (int q = 0; q < ctx.nranks; ++q) {
    char* chunk = recv + (q * op.count + offset) * elt;
    const bool foreign = domains.domainOf(q) != ctx.domain();
    if (foreign && inPieces) {
      for (const Op& step : gatherSteps(ctx, op, chunk, n))
        steps.push_back(step);
      continue;
    }
    const int holder = foreign ? receiverIn(domains, ctx.domain(), q) : q;
    steps.push_back(domainOp(OpKind::Broadcast, op, chunk, chunk, n,
                             domains.localRank(holder)));
  }
  ctx.inDomain(steps);
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
        Transfers across = sendBlocks(ctx, op, offset, n);
        // While the chunk travels; its spread inside the domain reads it.
        if (own != send)
          ctx.data->copy(own + offset * elt, send + offset * elt, n * elt);
        return across;
      },
      [&](size_t offset, size_t n) { spreadInDomain(ctx, op, offset, n); });
}

}  // namespace hetccl
