#include "algo/plan_choice.h"
#include "algo/plan_context.h"
#include "op/op_traits.h"
#include "util/error.h"

namespace hetccl {
namespace {

void runCollectivePlan(const PlanContext& ctx, const Op& op) {
  switch (op.kind) {
    case OpKind::AllReduce:
      return allReducePlan(ctx, op);
    case OpKind::AllGather:
      return allGatherPlan(ctx, op);
    case OpKind::Broadcast:
      return broadcastPlan(ctx, op);
    case OpKind::Reduce:
      return reducePlan(ctx, op);
    case OpKind::ReduceScatter:
      return reduceScatterPlan(ctx, op);
    case OpKind::AlltoAll:
      return allToAllPlan(ctx, op);
    case OpKind::Gather:
      return gatherPlan(ctx, op);
    case OpKind::Scatter:
      return scatterPlan(ctx, op);
    case OpKind::Send:
    case OpKind::Recv:
      fail(ncclInternalError, "no plan for %s", opKindName(op.kind));
  }
}

// The first op of its kind and size class says which plan it takes.
void noteChoice(const PlanContext& ctx, const Op& op) {
  if (ctx.decisions == nullptr) return;
  ctx.decisions->note(op,
                      [&] { return describePlan(ctx, choosePlan(ctx, op)); });
}

}  // namespace

// As on a single domain: collectives in call order, then the group's
// point-to-point ops together.
void runPlans(const PlanContext& ctx, const std::vector<Op>& ops) {
  std::vector<Op> pointToPoint;
  for (const Op& op : ops) {
    noteChoice(ctx, op);
    if (isPointToPoint(op.kind)) {
      pointToPoint.push_back(op);
      continue;
    }
    PlanContext planned = ctx;
    planned.call = signatureOf(op);
    if (ctx.onPlanStart) ctx.onPlanStart({op});
    runCollectivePlan(planned, op);
  }
  if (pointToPoint.empty()) return;
  PlanContext grouped = ctx;
  grouped.call.reset();
  if (ctx.onPlanStart) ctx.onPlanStart(pointToPoint);
  sendRecvPlan(grouped, pointToPoint, PeerReach::kFewPeers);
}

}  // namespace hetccl
