// Point-to-point routing: peers in this rank's domain are reached through
// the domain communicator, peers elsewhere through links. Transfers across
// domains are posted first and only waited for after the domain's own
// group is done, so no rank waits for another while holding back a
// transfer that one needs.
#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {

Op pointToPoint(OpKind kind, const Op& user, const void* data, size_t count,
                int peer) {
  Op op = user;
  op.kind = kind;
  op.sendbuff = kind == OpKind::Send ? data : nullptr;
  op.recvbuff = kind == OpKind::Recv ? const_cast<void*>(data) : nullptr;
  op.count = count;
  op.root = peer;
  return op;
}

void sendRecvPlan(const PlanContext& ctx, const std::vector<Op>& ops) {
  for (auto& request : startSendRecv(ctx, ops)) ctx.wait(*request);
}

std::vector<std::shared_ptr<TransferRequest>> startSendRecv(
    const PlanContext& ctx, const std::vector<Op>& ops) {
  std::vector<Op> inDomain;
  std::vector<std::shared_ptr<TransferRequest>> across;
  for (const Op& op : ops) {
    size_t bytes = op.count * dtypeSize(op.dtype);
    if (ctx.domains->domainOf(op.root) == ctx.domain()) {
      Op local = op;
      local.root = ctx.domains->localRank(op.root);
      inDomain.push_back(local);
    } else if (op.kind == OpKind::Send) {
      across.push_back(ctx.linkTo(op.root).send(op.sendbuff, bytes));
    } else {
      across.push_back(ctx.linkTo(op.root).recv(op.recvbuff, bytes));
    }
  }
  if (!inDomain.empty()) ctx.inDomain(inDomain);
  return across;
}

}  // namespace hetccl
