// Broadcast across domains: the root's domain broadcasts first; then, for
// every other domain, the buffer is cut into as many pieces as the larger
// of the two domains has ranks, so that every rank on both sides takes its
// turn, and each domain broadcasts every piece from the rank that received
// it.
#include <algorithm>
#include <cstring>

#include "algo/ownership.h"
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

int piecesFor(const PlanContext& ctx, int rootDomain, int domain) {
  return static_cast<int>(std::max(ctx.domains->members(rootDomain).size(),
                                   ctx.domains->members(domain).size()));
}

}  // namespace

void broadcastPlan(const PlanContext& ctx, const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  auto* recv = static_cast<char*>(op.recvbuff);
  int rootDomain = ctx.domains->domainOf(op.root);
  const std::vector<int>& senders = ctx.domains->members(rootDomain);
  if (ctx.domain() == rootDomain) {
    Op local = op;
    local.root = ctx.domains->localRank(op.root);
    ctx.inDomain(local);
  }
  std::vector<std::shared_ptr<TransferRequest>> across;
  for (int d = 0; d < ctx.domains->count(); ++d) {
    if (d == rootDomain) continue;
    const std::vector<int>& receivers = ctx.domains->members(d);
    int pieces = piecesFor(ctx, rootDomain, d);
    for (int j = 0; j < pieces; ++j) {
      ElementRange range = ownedRange(op.count, pieces, j);
      int sender = senders[j % senders.size()];
      int receiver = receivers[j % receivers.size()];
      char* data = recv + range.begin * elt;
      if (sender == ctx.rank)
        across.push_back(ctx.linkTo(receiver).send(data, range.size() * elt));
      if (receiver == ctx.rank)
        across.push_back(ctx.linkTo(sender).recv(data, range.size() * elt));
    }
  }
  for (auto& request : across) ctx.wait(*request);
  if (ctx.domain() == rootDomain) return;
  std::vector<Op> broadcasts;
  int pieces = piecesFor(ctx, rootDomain, ctx.domain());
  for (int j = 0; j < pieces; ++j) {
    ElementRange range = ownedRange(op.count, pieces, j);
    if (range.size() == 0) continue;
    Op piece = op;
    piece.sendbuff = recv + range.begin * elt;
    piece.recvbuff = recv + range.begin * elt;
    piece.count = range.size();
    piece.root = j % ctx.domainSize();
    broadcasts.push_back(piece);
  }
  ctx.inDomain(broadcasts);
}

}  // namespace hetccl
