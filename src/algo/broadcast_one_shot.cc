// Broadcast of a small buffer in one exchange across domains: the root
// sends it straight to every rank of the other domains while its own
// domain broadcasts it. One cross-domain latency instead of the
// pipeline's broadcast in the root's domain, transfer and broadcast in
// each other domain (broadcast.cc); the root sends the buffer once per rank
// outside its domain, which is why only small buffers take this plan
// (HETCCL_ONE_SHOT_MAX).
#include <memory>
#include <vector>

#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {

void broadcastOneShotPlan(const PlanContext& ctx, const Op& op) {
  const size_t bytes = op.count * dtypeSize(op.dtype);
  const int rootDomain = ctx.domains->domainOf(op.root);
  std::vector<std::shared_ptr<TransferRequest>> across;
  if (ctx.rank == op.root) {
    for (int q = 0; q < ctx.nranks; ++q)
      if (ctx.domains->domainOf(q) != rootDomain)
        across.push_back(ctx.sendTo(q, op.sendbuff, bytes));
  } else if (ctx.domain() != rootDomain) {
    across.push_back(ctx.recvFrom(op.root, op.recvbuff, bytes));
  }
  if (ctx.domain() == rootDomain) {
    Op local = op;
    local.root = ctx.domains->localRank(op.root);
    ctx.inDomain(local);
  }
  for (auto& request : across) ctx.wait(request);
}

}  // namespace hetccl
