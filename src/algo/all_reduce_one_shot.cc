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
#include <vector>

#include "algo/domain_steps.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {

void allReduceOneShotPlan(const PlanContext& ctx, const Op& op) {
  const size_t bytes = op.count * dtypeSize(op.dtype);
  const int domains = ctx.domains->count();
  const int mine = ctx.domain();
  const int localRank = ctx.localRank();
  const int mySize = ctx.domainSize();
  auto* recv = static_cast<char*>(op.recvbuff);
  // The other domains' partials may arrive while this domain reduces.
  char* scratch = ctx.scratchBytes(bytes * (domains - 1));
  std::vector<const void*> sources(domains);
  std::vector<std::shared_ptr<TransferRequest>> requests;
  for (int d = 0; d < domains; ++d) {
    if (d == mine) continue;
    const std::vector<int>& members = ctx.domains->members(d);
    const int from = members[localRank % members.size()];
    requests.push_back(ctx.recvFrom(from, scratch, bytes));
    sources[d] = scratch;
    scratch += bytes;
  }
  ctx.inDomain(domainOp(OpKind::AllReduce, op, op.sendbuff, recv, op.count));
  sources[mine] = recv;
  for (int d = 0; d < domains; ++d) {
    if (d == mine) continue;
    for (int peer : ctx.domains->members(d))
      if (ctx.domains->localRank(peer) % mySize == localRank)
        requests.push_back(ctx.sendTo(peer, recv, bytes));
  }
  // The sends read `recv`, which the combination overwrites.
  for (auto& request : requests) ctx.wait(*request);
  // Each domain's partial is scaled already: the domains premultiplied.
  Reduction reduction = op.reduce.over(op.dtype, ctx.nranks);
  reduction.preScale = nullptr;
  ctx.combine(recv, sources.data(), domains, op.count, reduction);
}

}  // namespace hetccl
