// All-to-all, gather and scatter across domains are point-to-point
// patterns: every block goes straight from its source to its destination,
// which is the least any plan can move across domains.
#include <cstring>

#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

Op transfer(OpKind kind, const Op& user, const void* send, void* recv,
            int peer) {
  Op op = user;
  op.kind = kind;
  op.sendbuff = send;
  op.recvbuff = recv;
  op.root = peer;
  return op;
}

}  // namespace

void allToAllPlan(const PlanContext& ctx, const Op& op) {
  size_t block = op.count * dtypeSize(op.dtype);
  auto* send = static_cast<const char*>(op.sendbuff);
  auto* recv = static_cast<char*>(op.recvbuff);
  std::vector<Op> ops;
  for (int peer = 0; peer < ctx.nranks; ++peer) {
    ops.push_back(
        transfer(OpKind::Send, op, send + peer * block, nullptr, peer));
    ops.push_back(
        transfer(OpKind::Recv, op, nullptr, recv + peer * block, peer));
  }
  sendRecvPlan(ctx, ops);
}

void gatherPlan(const PlanContext& ctx, const Op& op) {
  size_t block = op.count * dtypeSize(op.dtype);
  std::vector<Op> ops;
  ops.push_back(transfer(OpKind::Send, op, op.sendbuff, nullptr, op.root));
  if (ctx.rank == op.root) {
    auto* recv = static_cast<char*>(op.recvbuff);
    for (int peer = 0; peer < ctx.nranks; ++peer)
      ops.push_back(
          transfer(OpKind::Recv, op, nullptr, recv + peer * block, peer));
  }
  sendRecvPlan(ctx, ops);
}

void scatterPlan(const PlanContext& ctx, const Op& op) {
  size_t block = op.count * dtypeSize(op.dtype);
  std::vector<Op> ops;
  if (ctx.rank == op.root) {
    auto* send = static_cast<const char*>(op.sendbuff);
    for (int peer = 0; peer < ctx.nranks; ++peer)
      ops.push_back(
          transfer(OpKind::Send, op, send + peer * block, nullptr, peer));
  }
  ops.push_back(transfer(OpKind::Recv, op, nullptr, op.recvbuff, op.root));
  sendRecvPlan(ctx, ops);
}

}  // namespace hetccl
