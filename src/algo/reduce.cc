// Reduce and reduce-scatter across domains. The buffer is a row of blocks,
// each destined for one rank (the root, or each rank its own). Each domain
// reduces the whole buffer so that local rank i ends up owning part i of
// every block (the input is first laid out part-major, so that a plain
// reduce-scatter does this); each owner sends its parts to their blocks'
// ranks, across domains only where those are elsewhere; each destination
// combines the domains' partials in domain order. Every domain sends across
// only what other domains' ranks need, spread over all of its ranks.
#include <algorithm>
#include <cstring>

#include "algo/domain_steps.h"
#include "algo/ownership.h"
#include "algo/plan_context.h"
#include "runtime/host/host_reduce.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// The buffer of `blocks` blocks of `blockCount` elements; block b's result
// goes to rank destinationOf(b).
struct Delivery {
  size_t blocks;
  size_t blockCount;
  std::function<int(size_t)> destinationOf;
};

Op transfer(OpKind kind, const Op& user, const void* data, size_t count,
            int peer) {
  Op op = user;
  op.kind = kind;
  op.sendbuff = kind == OpKind::Send ? data : nullptr;
  op.recvbuff = kind == OpKind::Recv ? const_cast<void*>(data) : nullptr;
  op.count = count;
  op.root = peer;
  return op;
}

// Copies `send` so that part i of every block (ownedRange(blockCount,
// size, i)) lies together, in order of i and then of the block.
void layOutPartMajor(const char* send, char* out, const Delivery& delivery,
                     int size, size_t elt) {
  for (int i = 0; i < size; ++i) {
    ElementRange part = ownedRange(delivery.blockCount, size, i);
    for (size_t b = 0; b < delivery.blocks; ++b) {
      std::memcpy(out, send + (b * delivery.blockCount + part.begin) * elt,
                  part.size() * elt);
      out += part.size() * elt;
    }
  }
}

void reduceAndDeliver(const PlanContext& ctx, const Op& op,
                      const Delivery& delivery, void* result) {
  size_t elt = dtypeSize(op.dtype);
  size_t n = delivery.blocks * delivery.blockCount;
  int domains = ctx.domains->count();
  int size = ctx.domainSize();
  // Scratch: the input laid out part-major, the domain's partial result,
  // and one partial per domain for the block this rank receives.
  char* laidOut =
      ctx.scratchBytes((2 * n + domains * delivery.blockCount) * elt);
  char* partial = laidOut + n * elt;
  char* assembled = partial + n * elt;
  layOutPartMajor(static_cast<const char*>(op.sendbuff), laidOut, delivery,
                  size, elt);
  size_t base = delivery.blocks * (delivery.blockCount / size);
  reduceInDomain(ctx, op, laidOut, partial, n, base);

  std::vector<Op> transfers;
  ElementRange ownPart = ownedRange(delivery.blockCount, size, ctx.localRank());
  const char* owned = partial + ctx.localRank() * base * elt;
  for (size_t b = 0; b < delivery.blocks; ++b) {
    if (ownPart.size() > 0)
      transfers.push_back(transfer(OpKind::Send, op,
                                   owned + b * ownPart.size() * elt,
                                   ownPart.size(), delivery.destinationOf(b)));
    if (delivery.destinationOf(b) != ctx.rank) continue;
    for (int d = 0; d < domains; ++d) {
      const std::vector<int>& members = ctx.domains->members(d);
      int senders = static_cast<int>(members.size());
      for (int i = 0; i < senders; ++i) {
        ElementRange part = ownedRange(delivery.blockCount, senders, i);
        if (part.size() == 0) continue;
        char* slot = assembled + (d * delivery.blockCount + part.begin) * elt;
        transfers.push_back(
            transfer(OpKind::Recv, op, slot, part.size(), members[i]));
      }
    }
  }
  sendRecvPlan(ctx, transfers);
  if (result == nullptr) return;
  Reduction reduction{op.dtype, op.reduce.base};
  reduction.divisor = static_cast<uint64_t>(ctx.nranks);
  std::vector<const void*> sources;
  for (int d = 0; d < domains; ++d)
    sources.push_back(assembled + d * delivery.blockCount * elt);
  hostReduce(result, sources.data(), domains, delivery.blockCount, reduction,
             false, op.reduce.average);
}

}  // namespace

void reducePlan(const PlanContext& ctx, const Op& op) {
  Delivery delivery{1, op.count, [&](size_t) { return op.root; }};
  reduceAndDeliver(ctx, op, delivery,
                   ctx.rank == op.root ? op.recvbuff : nullptr);
}

void reduceScatterPlan(const PlanContext& ctx, const Op& op) {
  Delivery delivery{static_cast<size_t>(ctx.nranks), op.count,
                    [](size_t block) { return static_cast<int>(block); }};
  reduceAndDeliver(ctx, op, delivery, op.recvbuff);
}

}  // namespace hetccl
