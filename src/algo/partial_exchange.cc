#include "algo/partial_exchange.h"

#include "algo/domain_steps.h"

namespace hetccl {

PartialExchange::PartialExchange(const PlanContext& ctx, char* scratch,
                                 size_t bytes)
    : ctx_(ctx), bytes_(bytes), sources_(ctx.domains->count()) {
  const int mine = ctx.domain();
  const int localRank = ctx.localRank();
  for (int d = 0; d < ctx.domains->count(); ++d) {
    if (d == mine) continue;
    const std::vector<int>& members = ctx.domains->members(d);
    const int from = members[localRank % members.size()];
    requests_.push_back(ctx.recvFrom(from, scratch, bytes));
    sources_[d] = scratch;
    scratch += bytes;
  }
}

void PartialExchange::combineInto(const Op& op, const void* own, void* dst) {
  for (auto& request : requests_) ctx_.wait(request);
  sources_[ctx_.domain()] = own;
  ctx_.combine(dst, sources_.data(), static_cast<int>(sources_.size()),
               op.count, partialsCombination(ctx_, op));
}

}  // namespace hetccl
