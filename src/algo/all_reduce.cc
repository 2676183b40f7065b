// All-reduce across domains, chunk by chunk:
//   1. inside each domain, a reduce-scatter leaves each rank owning the
//      domain's partial sum of its range (ownership.h);
//   2. across domains, the owners of each piece send their partials to
//      the piece's reducer, which combines them in domain order (so every
//      rank gets bitwise the same result) and sends the result back;
//   3. inside each domain, an all-gather spreads the owned ranges.
// Step 2 of one chunk is in flight while step 1 of the next one runs, and
// a chunk's results are still arriving while the next chunk's partials
// are combined: waiting for them (step 3) comes one chunk later, so that
// each chunk's results do not wait for the round trip of the chunk
// before (on a GPU rank, the engine's stream runs the combine of chunk
// c + 1 behind whatever chunk c waits for).
// Each domain moves about 2(D-1)/D of the buffer across domains, spread
// over its ranks by the ownership of the pieces.
#include <algorithm>
#include <memory>
#include <optional>

#include "algo/domain_steps.h"
#include "algo/ownership.h"
#include "algo/pipeline.h"
#include "algo/plan_choice.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// The cross-domain exchange of one chunk, started and then finished.
struct ChunkExchange {
  size_t offset = 0;  // first element of the chunk
  size_t count = 0;
  // This rank's partial of the chunk: the output, or the input itself
  // (partialIsInput).
  const char* partial = nullptr;
  OwnCuts<Piece>::Shared pieces;  // this rank's
  Transfers partials;  // partials arriving at a reducer, piece by piece
  Transfers others;    // everything else: sends, results arriving
  char* scratch = nullptr;
  // Between 2 domains whose links combine on receive (a CPU rank's shm
  // and tcp links): the other domain's partials are combined with this
  // rank's as they arrive, straight into the output, instead of landing
  // in scratch.
  bool combinedOnReceive = false;
};

// Whether every partial this rank reduces of `pieces` can be combined as
// it arrives.
bool combinesOnReceive(const PlanContext& ctx,
                       const std::vector<Piece>& pieces) {
  if (ctx.domains->count() != 2) return false;
  const int other = 1 - ctx.domain();
  for (const Piece& piece : pieces)
    if (piece.reducerDomain == ctx.domain() &&
        !ctx.combinesOnReceive(piece.owners[other]))
      return false;
  return true;
}

// Step 2, first half: post the partials. On every link, both sides post
// in the same order (partials of chunk c, of chunk c+1, then the results
// of chunk c, ...), which is how transfers are matched.
void startExchange(const PlanContext& ctx, const Op& op, ChunkExchange& x) {
  size_t elt = dtypeSize(op.dtype);
  int domains = ctx.domains->count();
  char* scratch = x.scratch;
  x.combinedOnReceive = combinesOnReceive(ctx, *x.pieces);
  auto* recv = static_cast<char*>(op.recvbuff) + x.offset * elt;
  for (const Piece& piece : *x.pieces) {
    size_t bytes = piece.range.size() * elt;
    if (piece.reducerDomain == ctx.domain() && x.combinedOnReceive) {
      const int other = 1 - ctx.domain();
      const size_t at = piece.range.begin * elt;
      x.partials.push_back(ctx.recvCombining(
          piece.owners[other], recv + at, x.partial + at, bytes,
          {partialsCombination(ctx, op), other < ctx.domain()}));
    } else if (piece.reducerDomain == ctx.domain()) {
      for (int d = 0; d < domains; ++d) {
        if (d == ctx.domain()) continue;
        x.partials.push_back(ctx.recvFrom(piece.owners[d], scratch, bytes));
        scratch += bytes;
      }
    } else {
      const int reducer = piece.owners[piece.reducerDomain];
      x.others.push_back(
          ctx.sendTo(reducer, x.partial + piece.range.begin * elt, bytes));
    }
  }
}

// Step 2, second half: post the receipt of results, combine the partials
// of the pieces this rank reduces and send their results.
void exchangeResults(const PlanContext& ctx, const Op& op, ChunkExchange& x) {
  size_t elt = dtypeSize(op.dtype);
  int domains = ctx.domains->count();
  auto* recv = static_cast<char*>(op.recvbuff) + x.offset * elt;
  for (const Piece& piece : *x.pieces) {
    if (piece.reducerDomain == ctx.domain()) continue;
    x.others.push_back(ctx.recvFrom(piece.owners[piece.reducerDomain],
                                    recv + piece.range.begin * elt,
                                    piece.range.size() * elt));
  }
  Reduction reduction = partialsCombination(ctx, op);
  std::vector<const void*> sources(domains);
  const char* scratch = x.scratch;
  size_t next = 0;
  for (const Piece& piece : *x.pieces) {
    if (piece.reducerDomain != ctx.domain()) continue;
    char* mine = recv + piece.range.begin * elt;
    size_t bytes = piece.range.size() * elt;
    if (x.combinedOnReceive) {
      ctx.wait(x.partials[next++]);
      x.others.push_back(
          ctx.sendTo(piece.owners[1 - ctx.domain()], mine, bytes));
      continue;
    }
    for (int d = 0; d < domains; ++d) {
      if (d == ctx.domain()) {
        sources[d] = x.partial + piece.range.begin * elt;
        continue;
      }
      ctx.wait(x.partials[next++]);
      sources[d] = scratch;
      scratch += bytes;
    }
    ctx.combine(mine, sources.data(), domains, piece.range.size(), reduction);
    for (int d = 0; d < domains; ++d)
      if (d != ctx.domain())
        x.others.push_back(ctx.sendTo(piece.owners[d], mine, bytes));
  }
}

// Step 3: once every transfer of the chunk is done, spread it in the
// domain.
void completeChunk(const PlanContext& ctx, const Op& op, ChunkExchange& x) {
  for (auto& request : x.others) ctx.wait(request);
  gatherInDomain(
      ctx, op, static_cast<char*>(op.recvbuff) + x.offset * dtypeSize(op.dtype),
      x.count);
}

// Scratch for the partials one chunk's pieces bring to this rank: none
// where they are combined as they arrive.
size_t scratchFor(const PlanContext& ctx, const std::vector<Piece>& pieces,
                  size_t elt) {
  if (combinesOnReceive(ctx, pieces)) return 0;
  size_t bytes = 0;
  for (const Piece& piece : pieces)
    if (piece.reducerDomain == ctx.domain())
      bytes += piece.range.size() * elt * (ctx.domains->count() - 1);
  return bytes;
}

}  // namespace

void allReducePlan(const PlanContext& ctx, const Op& op) {
  const PlanChoice choice = choosePlan(ctx, op);
  if (choice.plan == PlanChoice::Plan::OneShot)
    return allReduceOneShotPlan(ctx, op);
  size_t elt = dtypeSize(op.dtype);
  size_t perChunk = choice.chunkElements;
  const size_t fullChunk = std::min(perChunk, op.count);
  const OwnCuts<Piece> pieces(
      [&](size_t n) { return crossDomainPieces(n, *ctx.domains); },
      ctx.domain(), ctx.rank, fullChunk);
  // Two chunks are in flight: each gets its own half of the scratch.
  size_t half = 0;
  for (size_t offset = 0; offset < std::min(op.count, 2 * perChunk);
       offset += perChunk)
    half = std::max(
        half, scratchFor(ctx, *pieces.of(std::min(perChunk, op.count - offset)),
                         elt));
  char* scratch = ctx.scratchBytes(2 * half);
  auto* send = static_cast<const char*>(op.sendbuff);
  auto* recv = static_cast<char*>(op.recvbuff);
  std::optional<ChunkExchange> completing;  // its results still arriving
  pipelineChunks(
      op.count, perChunk,
      [&](const ChunkSpan& chunk) {
        ChunkExchange x;
        x.offset = chunk.offset;
        x.count = chunk.n;
        x.pieces = pieces.of(chunk.n);
        x.scratch = scratch + (chunk.index % 2) * half;
        if (partialIsInput(ctx, op)) {
          x.partial = send + x.offset * elt;
        } else {
          reduceInDomain(ctx, op, send + x.offset * elt, recv + x.offset * elt,
                         x.count);
          x.partial = recv + x.offset * elt;
        }
        startExchange(ctx, op, x);
        return x;
      },
      [&](ChunkExchange& x) {
        exchangeResults(ctx, op, x);
        if (completing) completeChunk(ctx, op, *completing);
        completing = std::move(x);
      });
  if (completing) completeChunk(ctx, op, *completing);
}

}  // namespace hetccl
