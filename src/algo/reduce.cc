// Reduce across domains, chunk by chunk:
//   1. inside each domain (but the root's where it takes one pass), a
//      reduce-scatter leaves each rank owning the domain's partial of its
//      range (ownership.h);
//   2. across domains, the owners of each stretch (ownerStretches) send
//      their partials to its owner in the root's domain;
//   3. in the root's domain of GPU ranks each rank adds the partials of its
//      range to a copy of its input, and the domain reduces those copies
//      to the root: one pass of the domain's library, as a reduce of that
//      domain alone (onePassAtRoot). Otherwise (CPU ranks, one chunk, or a
//      premultiplied sum or an average, whose partials are scaled while
//      the copies would not be) it takes two steps: a reduce-scatter as in
//      the other domains, the partials combined in domain order, and each
//      rank's range handed to the root.
// So the bytes the root's domain takes in are spread over all its ranks,
// a rank exchanges across domains with the few ranks whose ranges overlap
// its own (one, its rail peer, where the domains are of one size), and the
// root takes the result from its own domain only. Step 2 of one chunk is
// in flight while step 1 of the next one runs.
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

// A chunk's scratch: this rank's part of its domain's partial (its share
// of the reduce-scatter, then the tail every rank of the domain receives),
// or in the root's domain taking one pass the copy of its input; in the
// root's domain the other domains' partials of its range as they arrive,
// by stretch then domain, and with two steps their result (the root's
// goes to its output).
struct ChunkScratch {
  char* owned;
  char* arrivals;
  char* result;
};

struct Chunk {
  size_t offset = 0;
  size_t count = 0;
  OwnCuts<Stretch>::Shared stretches;  // this rank's
  ChunkScratch scratch{};
  // This rank's partial of its range: `owned`, the input itself
  // (partialIsInput), or its range of the input's copy (onePass); element
  // 0 is the range's first.
  const char* partial = nullptr;
  Transfers sends;       // partials on their way to the root's domain
  Transfers arrivals;    // partials arriving, in the order of `arrivals`
  bool onePass = false;  // onePassAtRoot
};

int rootDomainOf(const PlanContext& ctx, const Op& op) {
  return ctx.domains->domainOf(op.root);
}

// Whether this rank is in the root's domain and that domain reduces in
// one pass of its library (step 3 above): GPU ranks, where the buffer
// spans several chunks. With one chunk nothing hides the copy, and the
// domain's one pass waits for the other domains' partials where its
// reduce-scatter would have run beside them; on CPU ranks the copies take
// the memory bandwidth the host collectives need (hetccl-sim: 0.44x of the
// yardstick with two steps, 0.24x with one pass).
bool onePassAtRoot(const PlanContext& ctx, const Op& op, size_t perChunk) {
  return ctx.dataOnGpu && ctx.domain() == rootDomainOf(ctx, op) &&
         ctx.domainSize() > 1 && !op.reduce.preMultiply && !op.reduce.average &&
         op.count > perChunk;
}

// The bytes of each part of a chunk's scratch (ChunkScratch), in order.
std::array<size_t, 3> scratchParts(const PlanContext& ctx, const Op& op,
                                   size_t count, bool onePass) {
  const size_t elt = dtypeSize(op.dtype);
  const int size = ctx.domainSize();
  const size_t owned =
      partialIsInput(ctx, op) ? 0 : (count - (size - 1) * (count / size)) * elt;
  if (ctx.domain() != rootDomainOf(ctx, op)) return {owned, 0, 0};
  const size_t range = ownedRange(count, size, ctx.localRank()).size() * elt;
  const size_t arrivals = range * (ctx.domains->count() - 1);
  if (onePass) return {count * elt, arrivals, 0};
  return {owned, arrivals, ctx.rank == op.root ? 0 : range};
}

ChunkScratch chunkScratch(const PlanContext& ctx, const Op& op, size_t count,
                          bool onePass, char* at) {
  const std::array<size_t, 3> parts = scratchParts(ctx, op, count, onePass);
  return {at, at + parts[0], at + parts[0] + parts[1]};
}

// Steps 1 and 2: the domain's reduction (or in the root's domain taking
// one pass, the copy of the input), then the partials posted across. On
// every link both sides post in stretch order, chunk after chunk.
void startChunk(const PlanContext& ctx, const Op& op, Chunk& chunk) {
  const size_t elt = dtypeSize(op.dtype);
  const size_t first =
      ownedRange(chunk.count, ctx.domainSize(), ctx.localRank()).begin;
  const char* input =
      static_cast<const char*>(op.sendbuff) + chunk.offset * elt;
  if (chunk.onePass) {
    ctx.data->copy(chunk.scratch.owned, input, chunk.count * elt);
    chunk.partial = chunk.scratch.owned + first * elt;
  } else if (partialIsInput(ctx, op)) {
    chunk.partial = input;
  } else {
    reduceOwnedInDomain(ctx, op, input, chunk.scratch.owned, chunk.count,
                        chunk.count / ctx.domainSize());
    chunk.partial = chunk.scratch.owned;
  }
  const int rootDomain = rootDomainOf(ctx, op);
  char* arrival = chunk.scratch.arrivals;
  for (const Stretch& stretch : *chunk.stretches) {
    const size_t bytes = stretch.range.size() * elt;
    if (ctx.domain() != rootDomain) {
      chunk.sends.push_back(ctx.sendTo(
          stretch.owners[rootDomain],
          chunk.partial + (stretch.range.begin - first) * elt, bytes));
      continue;
    }
    for (int d = 0; d < ctx.domains->count(); ++d) {
      if (d == rootDomain) continue;
      chunk.arrivals.push_back(ctx.recvFrom(stretch.owners[d], arrival, bytes));
      arrival += bytes;
    }
  }
}

// Step 2's end in the root's domain: each stretch's partials combined in
// domain order, into `result` (which may be this rank's partial).
void combineStretches(const PlanContext& ctx, const Op& op, Chunk& chunk,
                      char* result) {
  const size_t elt = dtypeSize(op.dtype);
  const int domains = ctx.domains->count();
  const size_t first =
      ownedRange(chunk.count, ctx.domainSize(), ctx.localRank()).begin;
  const Reduction reduction = partialsCombination(ctx, op);
  std::vector<const void*> sources(domains);
  const char* arrival = chunk.scratch.arrivals;
  size_t next = 0;
  for (const Stretch& stretch : *chunk.stretches) {
    const size_t at = (stretch.range.begin - first) * elt;
    const size_t bytes = stretch.range.size() * elt;
    for (int d = 0; d < domains; ++d) {
      if (d == ctx.domain()) {
        sources[d] = chunk.partial + at;
        continue;
      }
      ctx.wait(chunk.arrivals[next++]);
      sources[d] = arrival;
      arrival += bytes;
    }
    ctx.combine(result + at, sources.data(), domains, stretch.range.size(),
                reduction);
  }
}

// Step 3 taking one pass: the domain reduces its ranks' copies, each with
// its range's partials added, to the root.
void reduceCopiesToRoot(const PlanContext& ctx, const Op& op,
                        const Chunk& chunk) {
  const size_t elt = dtypeSize(op.dtype);
  char* copy = chunk.scratch.owned;
  char* output = ctx.rank == op.root
                     ? static_cast<char*>(op.recvbuff) + chunk.offset * elt
                     : copy;
  ctx.inDomain(domainOp(OpKind::Reduce, op, copy, output, chunk.count,
                        ctx.domains->localRank(op.root)));
}

// Step 3 in two: the root's domain hands every rank's range to the root.
void deliverToRoot(const PlanContext& ctx, const Op& op, const Chunk& chunk,
                   char* result) {
  const size_t elt = dtypeSize(op.dtype);
  const std::vector<int>& members = ctx.domains->members(ctx.domain());
  const int size = ctx.domainSize();
  std::vector<Op> transfers;
  if (ctx.rank != op.root) {
    const size_t count = ownedRange(chunk.count, size, ctx.localRank()).size();
    if (count > 0)
      transfers.push_back(
          pointToPoint(OpKind::Send, op, result, count, op.root));
  } else {
    auto* output = static_cast<char*>(op.recvbuff) + chunk.offset * elt;
    for (int i = 0; i < size; ++i) {
      const ElementRange range = ownedRange(chunk.count, size, i);
      if (members[i] == op.root || range.size() == 0) continue;
      transfers.push_back(pointToPoint(OpKind::Recv, op,
                                       output + range.begin * elt, range.size(),
                                       members[i]));
    }
  }
  for (auto& request : startSendRecv(ctx, transfers)) ctx.wait(request);
}

void finishChunk(const PlanContext& ctx, const Op& op, Chunk& chunk) {
  for (auto& request : chunk.sends) ctx.wait(request);
  if (ctx.domain() != rootDomainOf(ctx, op)) return;
  const size_t elt = dtypeSize(op.dtype);
  const size_t first =
      ownedRange(chunk.count, ctx.domainSize(), ctx.localRank()).begin;
  if (chunk.onePass) {
    combineStretches(ctx, op, chunk, chunk.scratch.owned + first * elt);
    return reduceCopiesToRoot(ctx, op, chunk);
  }
  char* result = ctx.rank == op.root ? static_cast<char*>(op.recvbuff) +
                                           (chunk.offset + first) * elt
                                     : chunk.scratch.result;
  combineStretches(ctx, op, chunk, result);
  deliverToRoot(ctx, op, chunk, result);
}

}  // namespace

void reducePlan(const PlanContext& ctx, const Op& op) {
  const PlanChoice choice = choosePlan(ctx, op);
  if (choice.plan == PlanChoice::Plan::OneShot)
    return reduceOneShotPlan(ctx, op);
  const size_t perChunk = choice.chunkElements;
  const size_t fullChunk = std::min(perChunk, op.count);
  const bool onePass = onePassAtRoot(ctx, op, perChunk);
  const OwnCuts<Stretch> stretches(
      [&](size_t n) { return ownerStretches(n, *ctx.domains); }, ctx.domain(),
      ctx.rank, fullChunk);
  // Two chunks are in flight: each gets half. Every chunk but the last is
  // full, and the last, shorter one may need more: the last local rank's
  // range holds the count's remainder over the domain.
  auto bytesOf = [&](size_t count) {
    const std::array<size_t, 3> parts = scratchParts(ctx, op, count, onePass);
    return parts[0] + parts[1] + parts[2];
  };
  const size_t last = op.count % perChunk;
  const size_t half =
      std::max(bytesOf(fullChunk), last == 0 ? 0 : bytesOf(last));
  char* scratch = ctx.scratchBytes(2 * half);
  pipelineChunks(
      op.count, perChunk,
      [&](const ChunkSpan& span) {
        Chunk chunk;
        chunk.offset = span.offset;
        chunk.count = span.n;
        chunk.stretches = stretches.of(span.n);
        chunk.scratch = chunkScratch(ctx, op, span.n, onePass,
                                     scratch + (span.index % 2) * half);
        chunk.onePass = onePass;
        startChunk(ctx, op, chunk);
        return chunk;
      },
      [&](Chunk& chunk) { finishChunk(ctx, op, chunk); });
}

}  // namespace hetccl
