#include "engine/gpu/plan/single_rank_domain.h"

#include "op/op_traits.h"
#include "runtime/reduction.h"
#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {

void SingleRankDomain::launch(const std::vector<Op>& ops, StreamHandle stream) {
  for (const Op& op : ops) run(op, stream);
}

void SingleRankDomain::run(const Op& op, StreamHandle stream) const {
  if (isPointToPoint(op.kind))
    fail(ncclInternalError,
         "a one-rank domain was asked for a %s (plans copy a rank's "
         "transfers to itself)",
         opKindName(op.kind));
  const bool scaled = opTraits(op.kind).reduces && op.reduce.preMultiply;
  if (scaled && op.reduce.scalarPointer != nullptr)
    return vendor_->launch({op}, stream);
  if (op.count == 0) return;
  const size_t bytes = op.count * dtypeSize(op.dtype);
  if (scaled) {
    const void* sources[] = {op.sendbuff};
    hetcclDeviceReduction launch = deviceReduction(
        op.reduce.over(op.dtype, 1), op.recvbuff, sources, 1, op.count);
    module_.check(module_.api().reduceAsync(&launch, stream),
                  "scaling the input of a one-rank domain");
    return;
  }
  if (op.sendbuff == op.recvbuff) return;
  module_.check(
      module_.api().copyAsync(op.recvbuff, op.sendbuff, bytes, stream),
      "copying in a one-rank domain");
}

}  // namespace hetccl
