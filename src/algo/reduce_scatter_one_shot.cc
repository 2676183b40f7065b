// Reduce-scatter of a small buffer in one exchange across domains, like
// the one-shot all-reduce (all_reduce_one_shot.cc): an all-reduce of the
// whole input in each domain leaves every rank its domain's partial of
// every block; every rank receives its own block's partial from one member
// of each other domain (member localRank % size) and combines them in
// domain order. Each rank moves one block per other domain each way.
#include "algo/domain_steps.h"
#include "algo/partial_exchange.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {

void reduceScatterOneShotPlan(const PlanContext& ctx, const Op& op) {
  const size_t block = op.count * dtypeSize(op.dtype);
  // The domain's partial of every block, then the other domains' partials
  // of this rank's block.
  char* partial =
      ctx.scratchBytes(block * (ctx.nranks + ctx.domains->count() - 1));
  PartialExchange exchange(ctx, partial + block * ctx.nranks, block);
  ctx.inDomain(domainOp(OpKind::AllReduce, op, op.sendbuff, partial,
                        op.count * ctx.nranks));
  exchange.send([partial, block](int peer) { return partial + peer * block; });
  exchange.combineInto(op, partial + ctx.rank * block, op.recvbuff);
}

}  // namespace hetccl
