// Reduce and reduce-scatter across domains run the all-reduce plan into
// scratch memory and keep the part the rank needs. That moves the
// all-reduce's bytes across domains, more than these collectives strictly
// need; plans of their own are future work.
#include <cstring>

#include "algo/plan_context.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

// The all-reduce into scratch that follows the plan's own scratch area.
char* allReduceIntoScratch(const PlanContext& ctx, const Op& op, size_t count,
                           std::vector<char>& result) {
  result.resize(count * dtypeSize(op.dtype));
  Op whole = op;
  whole.kind = OpKind::AllReduce;
  whole.count = count;
  whole.recvbuff = result.data();
  allReducePlan(ctx, whole);
  return result.data();
}

}  // namespace

void reducePlan(const PlanContext& ctx, const Op& op) {
  std::vector<char> result;
  char* reduced = allReduceIntoScratch(ctx, op, op.count, result);
  if (ctx.rank == op.root && op.count > 0)
    std::memcpy(op.recvbuff, reduced, op.count * dtypeSize(op.dtype));
}

void reduceScatterPlan(const PlanContext& ctx, const Op& op) {
  std::vector<char> result;
  size_t block = op.count * dtypeSize(op.dtype);
  char* reduced =
      allReduceIntoScratch(ctx, op, op.count * ctx.nranks, result);
  if (block > 0) std::memcpy(op.recvbuff, reduced + ctx.rank * block, block);
}

}  // namespace hetccl
