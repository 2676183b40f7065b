// All-gather across domains: each block crosses to every other domain
// once, to one rank there (blocks are spread over that domain's ranks);
// then every domain broadcasts each block from the rank that holds it.
#include <cstring>

#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// The rank of `domain` that receives rank q's block from across domains.
int receiverOf(const PlanContext& ctx, int q, int domain) {
  const std::vector<int>& members = ctx.domains->members(domain);
  return members[q % members.size()];
}

}  // namespace

void allGatherPlan(const PlanContext& ctx, const Op& op) {
  size_t block = op.count * dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  char* own = recv + ctx.rank * block;
  if (own != op.sendbuff && block > 0) std::memmove(own, op.sendbuff, block);
  std::vector<std::shared_ptr<TransferRequest>> across;
  for (int q = 0; q < ctx.nranks; ++q) {
    int domain = ctx.domains->domainOf(q);
    if (q == ctx.rank) {
      for (int d = 0; d < ctx.domains->count(); ++d)
        if (d != ctx.domain())
          across.push_back(ctx.linkTo(receiverOf(ctx, q, d)).send(own, block));
    } else if (domain != ctx.domain() &&
               receiverOf(ctx, q, ctx.domain()) == ctx.rank) {
      across.push_back(ctx.linkTo(q).recv(recv + q * block, block));
    }
  }
  for (auto& request : across) ctx.wait(*request);
  std::vector<Op> broadcasts;
  for (int q = 0; q < ctx.nranks; ++q) {
    int holder = ctx.domains->domainOf(q) == ctx.domain()
                     ? q
                     : receiverOf(ctx, q, ctx.domain());
    Op bcast = op;
    bcast.kind = OpKind::Broadcast;
    bcast.sendbuff = recv + q * block;
    bcast.recvbuff = recv + q * block;
    bcast.root = ctx.domains->localRank(holder);
    broadcasts.push_back(bcast);
  }
  ctx.inDomain(broadcasts);
}

}  // namespace hetccl
