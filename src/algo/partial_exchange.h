// The exchange across domains that the one-shot reductions share: once its
// domain has reduced, every rank takes each other domain's partial of its
// result from one member of that domain (member localRank % size), gives
// its own domain's partial to the ranks of other domains that take it from
// it, and combines the partials in domain order itself, so that all ranks
// hold bitwise the same result.
#pragma once

#include <memory>
#include <vector>

#include "algo/plan_context.h"

namespace hetccl {

class PartialExchange {
 public:
  // Posts the receives of the other domains' partials, `bytes` each, into
  // `scratch` (room for one per other domain): they may arrive while this
  // domain still reduces.
  PartialExchange(const PlanContext& ctx, char* scratch, size_t bytes);

  // Sends this domain's partial, complete now, to the ranks of other
  // domains that take it from this rank: partialFor(peer) is where the part
  // `peer` takes lies.
  template <typename PartialFor>
  void send(PartialFor partialFor) {
    const int mine = ctx_.domain();
    const int localRank = ctx_.localRank();
    const int mySize = ctx_.domainSize();
    for (int d = 0; d < ctx_.domains->count(); ++d) {
      if (d == mine) continue;
      for (int peer : ctx_.domains->members(d))
        if (ctx_.domains->localRank(peer) % mySize == localRank)
          requests_.push_back(ctx_.sendTo(peer, partialFor(peer), bytes_));
    }
  }

  // Waits for every transfer (the sends may read `dst`), then combines this
  // domain's partial `own` and the others' into dst: op.count elements.
  void combineInto(const Op& op, const void* own, void* dst);

 private:
  const PlanContext& ctx_;
  const size_t bytes_;
  std::vector<const void*> sources_;  // each domain's partial, by domain
  std::vector<std::shared_ptr<TransferRequest>> requests_;
};

}  // namespace hetccl
