// Reduce-scatter across domains. The input is a row of blocks, one per
// rank. Each domain reduces the whole input so that local rank i ends up
// owning part i of every block (the input is first laid out part-major, so
// that a plain reduce-scatter does this); each owner sends its parts to
// their blocks' ranks, across domains only where those are elsewhere; each
// rank combines the domains' partials of its block in domain order. The
// work goes chunk by chunk, one chunk's exchange overlapping the next
// chunk's reduction. Every domain sends across only what other domains'
// ranks need, spread over all of its ranks. Over domains of one size it
// does better: each local rank reduces whole blocks, those of its matching
// ranks in every domain, and sends each across once
// (startChunkForMatchingRanks).
#include <algorithm>
#include <array>
#include <memory>

#include "algo/domain_steps.h"
#include "algo/ownership.h"
#include "algo/pipeline.h"
#include "algo/plan_choice.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// A chunk's scratch, in three parts: the input laid out for the domain's
// reduction, this rank's part of the domain's partial (its share of the
// reduce-scatter, then the tail every rank of the domain receives), and
// the domains' partials of this rank's blocks as they arrive. A part a
// rank has no use for takes no room: no layout where the partial is the
// input or the domain reads the blocks where they lie; no partial where
// the input is it; no room for the partials that arrive where they are
// combined as they do.
struct ChunkScratch {
  char* laidOut;
  char* owned;
  char* assembled;
};

// One chunk: elements [offset, offset + count) of every block.
struct Chunk {
  size_t offset;
  size_t count;
  ChunkScratch scratch;
  std::vector<std::shared_ptr<TransferRequest>> across;
  // This domain's partial of the chunk of this rank's block, where the
  // partial is the input itself (partialIsInput); else it is assembled.
  const char* ownPartial = nullptr;
  // The other domain's partial was combined with ownPartial as it arrived
  // (combinesOnReceive): the output holds the chunk once `across` is done.
  bool combinedOnReceive = false;
};

// Whether the other domain's partial of this rank's block, between 2
// domains, can be combined with this domain's as it arrives, straight into
// the output: every rank of `senders` it comes from sends over a link that
// combines on receive (a CPU rank's shm or tcp link). It saves a copy out
// of the link into scratch and a pass over that scratch.
bool combinesOnReceive(const PlanContext& ctx,
                       const std::vector<int>& senders) {
  for (int peer : senders)
    if (!ctx.combinesOnReceive(peer)) return false;
  return true;
}

// Posts the receive of `count` elements, from element `first` of this
// rank's block's chunk, of the other domain's partial, combined with
// `chunk.ownPartial` into the output.
void receiveCombining(const PlanContext& ctx, const Op& op, Chunk& chunk,
                      int peer, size_t first, size_t count) {
  const size_t elt = dtypeSize(op.dtype);
  const ReceiveCombine combine{partialsCombination(ctx, op),
                               ctx.domains->domainOf(peer) < ctx.domain()};
  chunk.across.push_back(ctx.recvCombining(
      peer, static_cast<char*>(op.recvbuff) + (chunk.offset + first) * elt,
      chunk.ownPartial + first * elt, count * elt, combine));
}

// Whether the other domain's partial of this rank's block is combined
// with this domain's as it arrives: between 2 domains, where this rank's
// partial is its input (partialIsInput) or, over domains of one size
// (`matching`), the matching rank's; from ranks whose links combine.
bool partialCombinesOnReceive(const PlanContext& ctx, const Op& op,
                              bool matching) {
  if (ctx.domains->count() != 2) return false;
  const std::vector<int>& others = ctx.domains->members(1 - ctx.domain());
  if (matching) return combinesOnReceive(ctx, {others[ctx.localRank()]});
  return partialIsInput(ctx, op) && combinesOnReceive(ctx, others);
}

// Whether every domain's ranks are evenly spaced and its library reads
// blocks that far apart (reduceBlocksWhereTheyLie).
bool blocksLieEvenly(const PlanContext& ctx);

// The elements of the domain's reduce-scatter that each local rank gets;
// `matching`: the blocks cross to matching ranks
// (startChunkForMatchingRanks).
size_t domainShare(const PlanContext& ctx, bool matching, size_t count) {
  return matching ? ctx.domains->count() * count
                  : ctx.nranks * (count / ctx.domainSize());
}

// The bytes of each part of a chunk's scratch (ChunkScratch), in order.
std::array<size_t, 3> scratchParts(const PlanContext& ctx, const Op& op,
                                   bool matching, size_t count) {
  const size_t elt = dtypeSize(op.dtype);
  const size_t n = ctx.nranks * count;
  const bool inPlace = partialIsInput(ctx, op);
  const bool laysOut = !inPlace && !(matching && blocksLieEvenly(ctx));
  const size_t share = domainShare(ctx, matching, count);
  const bool combining = partialCombinesOnReceive(ctx, op, matching);
  return {laysOut ? n * elt : 0,
          inPlace ? 0 : (n - (ctx.domainSize() - 1) * share) * elt,
          combining ? 0 : ctx.domains->count() * count * elt};
}

ChunkScratch chunkScratch(const PlanContext& ctx, const Op& op, bool matching,
                          size_t count, char* at) {
  const std::array<size_t, 3> parts = scratchParts(ctx, op, matching, count);
  return {at, at + parts[0], at + parts[0] + parts[1]};
}

// Copies the chunk of every block of `send` so that part i of each
// (ownedRange(count, size, i)) lies together, in order of i, then block.
void layOutPartMajor(const PlanContext& ctx, const Op& op, char* out,
                     const Chunk& chunk, int size, size_t elt) {
  const auto* send = static_cast<const char*>(op.sendbuff);
  for (int i = 0; i < size; ++i) {
    ElementRange part = ownedRange(chunk.count, size, i);
    for (int b = 0; b < ctx.nranks; ++b) {
      size_t first = b * op.count + chunk.offset + part.begin;
      ctx.data->copy(out, send + first * elt, part.size() * elt);
      out += part.size() * elt;
    }
  }
}

// Reduces the chunk inside the domain, runs the transfers inside the
// domain and posts those across. A rank whose partial is its input
// (partialIsInput) sends from the input in place and combines its own
// block's chunk from there: no layout, no domain step, no self-transfer.
void startChunk(const PlanContext& ctx, const Op& op, Chunk& chunk) {
  size_t elt = dtypeSize(op.dtype);
  size_t n = ctx.nranks * chunk.count;
  int domains = ctx.domains->count();
  int size = ctx.domainSize();
  const bool inPlace = partialIsInput(ctx, op);
  const char* owned = chunk.scratch.owned;
  if (!inPlace) {
    layOutPartMajor(ctx, op, chunk.scratch.laidOut, chunk, size, elt);
    reduceOwnedInDomain(ctx, op, chunk.scratch.laidOut, chunk.scratch.owned, n,
                        domainShare(ctx, false, chunk.count));
  }

  std::vector<Op> transfers;
  ElementRange ownPart = ownedRange(chunk.count, size, ctx.localRank());
  chunk.combinedOnReceive = partialCombinesOnReceive(ctx, op, false);
  auto ownedOf = [&](int b) {
    return inPlace ? static_cast<const char*>(op.sendbuff) +
                         (b * op.count + chunk.offset) * elt
                   : owned + b * ownPart.size() * elt;
  };
  for (int destination = 0; destination < ctx.nranks; ++destination) {
    if (inPlace && destination == ctx.rank) {
      chunk.ownPartial = ownedOf(destination);
    } else if (ownPart.size() > 0) {
      transfers.push_back(pointToPoint(OpKind::Send, op, ownedOf(destination),
                                       ownPart.size(), destination));
    }
    if (destination != ctx.rank) continue;
    for (int d = 0; d < domains; ++d) {
      const std::vector<int>& members = ctx.domains->members(d);
      int senders = static_cast<int>(members.size());
      for (int i = 0; i < senders; ++i) {
        ElementRange part = ownedRange(chunk.count, senders, i);
        if (part.size() == 0 || (inPlace && members[i] == ctx.rank)) continue;
        if (chunk.combinedOnReceive) continue;  // posted below
        char* slot =
            chunk.scratch.assembled + (d * chunk.count + part.begin) * elt;
        transfers.push_back(
            pointToPoint(OpKind::Recv, op, slot, part.size(), members[i]));
      }
    }
  }
  chunk.across = startSendRecv(ctx, transfers);
  if (!chunk.combinedOnReceive) return;
  const std::vector<int>& senders = ctx.domains->members(1 - ctx.domain());
  for (int i = 0; i < static_cast<int>(senders.size()); ++i) {
    ElementRange part = ownedRange(chunk.count, senders.size(), i);
    if (part.size() > 0)
      receiveCombining(ctx, op, chunk, senders[i], part.begin, part.size());
  }
}

// Waits for the chunk's transfers and combines the domains' partials.
void finishChunk(const PlanContext& ctx, const Op& op, Chunk& chunk) {
  for (auto& request : chunk.across) ctx.wait(request);
  if (chunk.combinedOnReceive) return;
  size_t elt = dtypeSize(op.dtype);
  int domains = ctx.domains->count();
  const char* assembled = chunk.scratch.assembled;
  Reduction reduction = partialsCombination(ctx, op);
  std::vector<const void*> sources;
  for (int d = 0; d < domains; ++d)
    sources.push_back(d == ctx.domain() && chunk.ownPartial != nullptr
                          ? chunk.ownPartial
                          : assembled + d * chunk.count * elt);
  ctx.combine(static_cast<char*>(op.recvbuff) + chunk.offset * elt,
              sources.data(), domains, chunk.count, reduction);
}

// Whether every domain has `size` ranks, at least 2.
bool domainsOfOneSize(const DomainMap& domains, int size) {
  if (size < 2) return false;
  for (int d = 0; d < domains.count(); ++d)
    if (static_cast<int>(domains.members(d).size()) != size) return false;
  return true;
}

// The ranks' step when `members` are evenly spaced (first + i * step),
// else 0.
size_t evenStep(const std::vector<int>& members) {
  if (members.size() < 2) return 0;
  const int step = members[1] - members[0];
  for (size_t i = 2; i < members.size(); ++i)
    if (members[i] - members[i - 1] != step) return 0;
  return step > 0 ? static_cast<size_t>(step) : 0;
}

bool blocksLieEvenly(const PlanContext& ctx) {
  if (!ctx.domainReadsBlocksApart) return false;
  for (int d = 0; d < ctx.domains->count(); ++d)
    if (evenStep(ctx.domains->members(d)) == 0) return false;
  return true;
}

// The domain step of startChunkForMatchingRanks without laying the input
// out first, where the domain reads blocks apart: one reduce-scatter per
// domain d over its ranks' blocks where they lie (evenly spaced), which
// leaves this rank the chunk of the block of d's rank of its local index
// at owned + d * count. False (nothing run) where it cannot.
bool reduceBlocksWhereTheyLie(const PlanContext& ctx, const Op& op,
                              const Chunk& chunk, char* owned) {
  if (!blocksLieEvenly(ctx)) return false;
  const size_t elt = dtypeSize(op.dtype);
  const auto* send = static_cast<const char*>(op.sendbuff);
  std::vector<Op> steps;
  for (int d = 0; d < ctx.domains->count(); ++d) {
    const std::vector<int>& members = ctx.domains->members(d);
    const size_t step = evenStep(members);
    const size_t first = members[0] * op.count + chunk.offset;
    Op blocks = domainOp(OpKind::ReduceScatter, op, send + first * elt,
                         owned + d * chunk.count * elt, chunk.count);
    blocks.blockStride = step * op.count;
    steps.push_back(blocks);
  }
  ctx.inDomain(steps);
  return true;
}

// Reduce-scatter over domains of one size: local rank i of each domain
// reduces, whole, the blocks of the ranks of local index i (one per
// domain), so each block crosses once to its rank from that rank's
// matching rank in every other domain. A rank exchanges with D-1 peers
// however many ranks there are, and nothing is delivered inside the
// domain afterwards. Block order after the layout: local index, then
// domain; a host domain reads the blocks where they lie instead
// (reduceBlocksWhereTheyLie).
void startChunkForMatchingRanks(const PlanContext& ctx, const Op& op,
                                Chunk& chunk) {
  const size_t elt = dtypeSize(op.dtype);
  const int domains = ctx.domains->count();
  const int size = ctx.domainSize();
  const size_t n = ctx.nranks * chunk.count;
  char* owned = chunk.scratch.owned;
  if (!reduceBlocksWhereTheyLie(ctx, op, chunk, owned)) {
    const auto* send = static_cast<const char*>(op.sendbuff);
    char* out = chunk.scratch.laidOut;
    for (int local = 0; local < size; ++local)
      for (int d = 0; d < domains; ++d) {
        const size_t block = ctx.domains->members(d)[local];
        ctx.data->copy(out, send + (block * op.count + chunk.offset) * elt,
                       chunk.count * elt);
        out += chunk.count * elt;
      }
    reduceOwnedInDomain(ctx, op, chunk.scratch.laidOut, owned, n,
                        domainShare(ctx, true, chunk.count));
  }
  chunk.ownPartial = owned + ctx.domain() * chunk.count * elt;
  auto matchingRank = [&](int d) {
    return ctx.domains->members(d)[ctx.localRank()];
  };
  chunk.combinedOnReceive = partialCombinesOnReceive(ctx, op, true);
  std::vector<Op> transfers;
  for (int d = 0; d < domains; ++d) {
    if (d == ctx.domain()) continue;
    const int peer = matchingRank(d);
    transfers.push_back(pointToPoint(
        OpKind::Send, op, owned + d * chunk.count * elt, chunk.count, peer));
    if (!chunk.combinedOnReceive)
      transfers.push_back(pointToPoint(
          OpKind::Recv, op, chunk.scratch.assembled + d * chunk.count * elt,
          chunk.count, peer));
  }
  chunk.across = startSendRecv(ctx, transfers);
  if (chunk.combinedOnReceive)
    receiveCombining(ctx, op, chunk, matchingRank(1 - ctx.domain()), 0,
                     chunk.count);
}

}  // namespace

// Chunk by chunk (the plan's chunk of the whole input at most), the
// exchange of one chunk in flight while the next chunk is reduced.
void reduceScatterPlan(const PlanContext& ctx, const Op& op) {
  const PlanChoice choice = choosePlan(ctx, op);
  if (choice.plan == PlanChoice::Plan::OneShot)
    return reduceScatterOneShotPlan(ctx, op);
  const bool matching = domainsOfOneSize(*ctx.domains, ctx.domainSize());
  // Elements of each block per chunk: the chunk spreads over the blocks.
  const size_t perChunk = choice.chunkElements;
  // Each of the two chunks in flight gets half. Every chunk but the last
  // is full, and the last, shorter one may need more: a rank's part of
  // the domain's partial holds the count's remainder over the domain.
  auto bytesOf = [&](size_t count) {
    const std::array<size_t, 3> parts = scratchParts(ctx, op, matching, count);
    return parts[0] + parts[1] + parts[2];
  };
  const size_t last = op.count % perChunk;
  const size_t half = std::max(bytesOf(std::min(perChunk, op.count)),
                               last == 0 ? 0 : bytesOf(last));
  char* scratch = ctx.scratchBytes(2 * half);
  pipelineChunks(
      op.count, perChunk,
      [&](const ChunkSpan& span) {
        Chunk chunk{span.offset,
                    span.n,
                    chunkScratch(ctx, op, matching, span.n,
                                 scratch + (span.index % 2) * half),
                    {}};
        if (matching)
          startChunkForMatchingRanks(ctx, op, chunk);
        else
          startChunk(ctx, op, chunk);
        return chunk;
      },
      [&](Chunk& chunk) { finishChunk(ctx, op, chunk); });
}

}  // namespace hetccl
