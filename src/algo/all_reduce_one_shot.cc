// All-reduce of a small buffer in one exchange across domains:
//   1. inside each domain, an all-reduce leaves every rank the domain's
//      partial result;
//   2. every rank receives each other domain's partial from one member of
//      that domain (member localRank % size), and sends its own to the
//      ranks of other domains that take it from it;
//   3. every rank combines the partials in domain order itself, so all
//      ranks hold bitwise the same result.
// One cross-domain latency and one domain step, against two of each for
// the pipelined plan (all_reduce.cc); each rank moves (D-1) times the
// buffer each way, which is why only small buffers take this plan
// (HETCCL_ONE_SHOT_MAX).
#include "algo/domain_steps.h"
#include "algo/partial_exchange.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {

void allReduceOneShotPlan(const PlanContext& ctx, const Op& op) {
  const size_t bytes = op.count * dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  PartialExchange exchange(
      ctx, ctx.scratchBytes(bytes * (ctx.domains->count() - 1)), bytes);
  ctx.inDomain(domainOp(OpKind::AllReduce, op, op.sendbuff, recv, op.count));
  exchange.send([recv](int) { return recv; });
  exchange.combineInto(op, recv, recv);
}

}  // namespace hetccl
