// Reduce-scatter of a small buffer in one exchange across domains, like
// the one-shot all-reduce (all_reduce_one_shot.cc): an all-reduce of the
// whole input in each domain leaves every rank its domain's partial of
// every block; every rank receives its own block's partial from one member
// of each other domain (member localRank % size) and combines them in
// domain order. Each rank moves one block per other domain each way.
#include <vector>

#include "algo/domain_steps.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {

void reduceScatterOneShotPlan(const PlanContext& ctx, const Op& op) {
  const size_t elt = dtypeSize(op.dtype);
  const size_t block = op.count * elt;
  const int domains = ctx.domains->count();
  const int mine = ctx.domain();
  const int localRank = ctx.localRank();
  const int mySize = ctx.domainSize();
  // The domain's partial of every block, then the other domains' partials
  // of this rank's block.
  char* partial = ctx.scratchBytes(block * (ctx.nranks + domains - 1));
  char* theirs = partial + block * ctx.nranks;
  std::vector<const void*> sources(domains);
  std::vector<std::shared_ptr<TransferRequest>> requests;
  for (int d = 0; d < domains; ++d) {
    if (d == mine) continue;
    const std::vector<int>& members = ctx.domains->members(d);
    const int from = members[localRank % members.size()];
    requests.push_back(ctx.recvFrom(from, theirs, block));
    sources[d] = theirs;
    theirs += block;
  }
  ctx.inDomain(domainOp(OpKind::AllReduce, op, op.sendbuff, partial,
                        op.count * ctx.nranks));
  sources[mine] = partial + ctx.rank * block;
  for (int d = 0; d < domains; ++d) {
    if (d == mine) continue;
    for (int peer : ctx.domains->members(d))
      if (ctx.domains->localRank(peer) % mySize == localRank)
        requests.push_back(ctx.sendTo(peer, partial + peer * block, block));
  }
  for (auto& request : requests) ctx.wait(*request);
  // Each domain's partial is scaled already: the domains premultiplied.
  Reduction reduction = op.reduce.over(op.dtype, ctx.nranks);
  reduction.preScale = nullptr;
  ctx.combine(op.recvbuff, sources.data(), domains, op.count, reduction);
}

}  // namespace hetccl
