// All-gather of small blocks in one exchange across domains: every rank
// sends its block straight to every rank of the other domains and
// receives theirs, while each domain broadcasts its own members' blocks.
// One cross-domain latency instead of a pipeline of pieces and per-piece
// broadcasts (all_gather.cc); each rank moves its block to every rank
// outside its domain, which is why only small buffers take this plan
// (HETCCL_ONE_SHOT_MAX, compared with the whole output).
#include <vector>

#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {

void allGatherOneShotPlan(const PlanContext& ctx, const Op& op) {
  const size_t block = op.count * dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  char* own = recv + ctx.rank * block;
  if (own != op.sendbuff) ctx.data->copy(own, op.sendbuff, block);
  std::vector<std::shared_ptr<TransferRequest>> across;
  for (int q = 0; q < ctx.nranks; ++q) {
    if (ctx.domains->domainOf(q) == ctx.domain()) continue;
    across.push_back(ctx.recvFrom(q, recv + q * block, block));
    across.push_back(ctx.sendTo(q, own, block));
  }
  std::vector<Op> broadcasts;
  for (int member : ctx.domains->members(ctx.domain())) {
    Op bcast = op;
    bcast.kind = OpKind::Broadcast;
    bcast.sendbuff = recv + member * block;
    bcast.recvbuff = recv + member * block;
    bcast.root = ctx.domains->localRank(member);
    broadcasts.push_back(bcast);
  }
  if (ctx.domainSize() > 1) ctx.inDomain(broadcasts);
  for (auto& request : across) ctx.wait(request);
}

}  // namespace hetccl
