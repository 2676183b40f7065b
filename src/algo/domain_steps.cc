#include "algo/domain_steps.h"

#include "util/dtype.h"

namespace hetccl {

Op domainOp(OpKind kind, const Op& user, const void* send, void* recv,
            size_t count, int root) {
  Op op = user;
  op.kind = kind;
  op.sendbuff = send;
  op.recvbuff = recv;
  op.count = count;
  op.root = root;
  op.reduce.average = false;  // divided once, by the cross-domain reducer
  return op;
}

namespace {

// A reduce-scatter of the part that divides evenly (this rank's `base`
// elements to `share`), and an all-reduce of the tail past base * size
// (to `tail`; the last local rank owns it): the vendor libraries offer
// reduce-scatter with equal counts only.
void reduceInDomainTo(const PlanContext& ctx, const Op& op, const char* send,
                      size_t n, size_t base, char* share, char* tail) {
  const int size = ctx.domainSize();
  if (size == 1) {
    ctx.inDomain(domainOp(OpKind::AllReduce, op, send, share, n));
    return;
  }
  if (base > 0)
    ctx.inDomain(domainOp(OpKind::ReduceScatter, op, send, share, base));
  const size_t rest = n - base * size;
  if (rest > 0)
    ctx.inDomain(domainOp(OpKind::AllReduce, op,
                          send + base * size * dtypeSize(op.dtype), tail,
                          rest));
}

}  // namespace

void reduceInDomain(const PlanContext& ctx, const Op& op, const char* send,
                    char* recv, size_t n) {
  const size_t elt = dtypeSize(op.dtype);
  const size_t base = n / ctx.domainSize();
  reduceInDomainTo(ctx, op, send, n, base, recv + ctx.localRank() * base * elt,
                   recv + base * ctx.domainSize() * elt);
}

void reduceOwnedInDomain(const PlanContext& ctx, const Op& op, const char* send,
                         char* owned, size_t n, size_t base) {
  reduceInDomainTo(ctx, op, send, n, base, owned,
                   owned + base * dtypeSize(op.dtype));
}

bool partialIsInput(const PlanContext& ctx, const Op& op) {
  return ctx.domainSize() == 1 && !op.reduce.preMultiply;
}

Reduction partialsCombination(const PlanContext& ctx, const Op& op) {
  Reduction reduction = op.reduce.over(op.dtype, ctx.nranks);
  reduction.preScale = nullptr;
  return reduction;
}

void gatherInDomain(const PlanContext& ctx, const Op& op, char* buffer,
                    size_t n) {
  for (const Op& step : gatherSteps(ctx, op, buffer, n)) ctx.inDomain(step);
}

std::vector<Op> gatherSteps(const PlanContext& ctx, const Op& op, char* buffer,
                            size_t n) {
  std::vector<Op> steps;
  int size = ctx.domainSize();
  if (size == 1) return steps;
  size_t elt = dtypeSize(op.dtype);
  size_t base = n / size;
  if (base > 0)
    steps.push_back(domainOp(OpKind::AllGather, op,
                             buffer + ctx.localRank() * base * elt, buffer,
                             base));
  size_t tail = n - base * size;
  if (tail > 0)
    steps.push_back(domainOp(OpKind::Broadcast, op, buffer + base * size * elt,
                             buffer + base * size * elt, tail, size - 1));
  return steps;
}

}  // namespace hetccl
