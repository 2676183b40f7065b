// Reduce of a small buffer in one exchange across domains: each domain
// reduces the whole buffer to one rank, its gateway (the member of the
// root's local index, modulo its size: the root's rail peer), which sends
// it straight to the root; the root's domain reduces to the root, which
// combines the domains' partials in domain order. One domain step and one
// cross-domain latency, against the pipelined plan's reduce-scatter,
// transfer and hand-over to the root inside its domain (reduce.cc); the
// root takes the whole buffer from each other domain over its own link,
// which is why only small buffers take this plan (HETCCL_ONE_SHOT_MAX).
#include <memory>
#include <vector>

#include "algo/domain_steps.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// The rank of `domain` that reduces it and sends its partial to the root.
int gatewayOf(const PlanContext& ctx, int domain, int root) {
  const std::vector<int>& members = ctx.domains->members(domain);
  return members[ctx.domains->localRank(root) % members.size()];
}

// Reduces this rank's domain to its gateway (the root in the root's
// domain) into `partial`, which every rank of a domain of several passes
// (the libraries write it only at the gateway). Returns where the gateway's
// partial lies: the input itself where it is one already.
const char* reduceToGateway(const PlanContext& ctx, const Op& op,
                            char* partial) {
  if (partialIsInput(ctx, op)) return static_cast<const char*>(op.sendbuff);
  const int gateway = gatewayOf(ctx, ctx.domain(), op.root);
  ctx.inDomain(domainOp(OpKind::Reduce, op, op.sendbuff, partial, op.count,
                        ctx.domains->localRank(gateway)));
  return partial;
}

}  // namespace

void reduceOneShotPlan(const PlanContext& ctx, const Op& op) {
  const size_t bytes = op.count * dtypeSize(op.dtype);
  const int rootDomain = ctx.domains->domainOf(op.root);
  const int domains = ctx.domains->count();
  const bool atRoot = ctx.rank == op.root;
  // The partial (none where the input is one), then at the root one
  // arrival per other domain.
  const size_t partialBytes = partialIsInput(ctx, op) ? 0 : bytes;
  char* scratch =
      ctx.scratchBytes(partialBytes + (atRoot ? (domains - 1) * bytes : 0));
  std::vector<std::shared_ptr<TransferRequest>> across;
  std::vector<const void*> sources(domains);
  if (atRoot) {
    char* arrival = scratch + partialBytes;
    for (int d = 0; d < domains; ++d) {
      if (d == rootDomain) continue;
      across.push_back(
          ctx.recvFrom(gatewayOf(ctx, d, op.root), arrival, bytes));
      sources[d] = arrival;
      arrival += bytes;
    }
  }
  const char* partial = reduceToGateway(ctx, op, scratch);
  if (ctx.domain() != rootDomain &&
      ctx.rank == gatewayOf(ctx, ctx.domain(), op.root))
    across.push_back(ctx.sendTo(op.root, partial, bytes));
  for (auto& request : across) ctx.wait(request);
  if (!atRoot) return;
  sources[rootDomain] = partial;
  ctx.combine(op.recvbuff, sources.data(), domains, op.count,
              partialsCombination(ctx, op));
}

}  // namespace hetccl
