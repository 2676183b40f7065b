#include "perf/reduce_op.h"

namespace hetccl {
namespace perf {

const std::vector<ReduceOp>& allReduceOps() {
  static const std::vector<ReduceOp> ops = {
      {OpKind::kSum, "sum", ncclSum},
      {OpKind::kProd, "prod", ncclProd},
      {OpKind::kMax, "max", ncclMax},
      {OpKind::kMin, "min", ncclMin},
      {OpKind::kAvg, "avg", ncclAvg},
      {OpKind::kPreMulSum, "premulsum", ncclSum},
  };
  return ops;
}

const ReduceOp* findReduceOp(const std::string& name) {
  const std::string canonical = name == "mulsum" ? "premulsum" : name;
  for (const ReduceOp& op : allReduceOps()) {
    if (canonical == op.name) return &op;
  }
  return nullptr;
}

}  // namespace perf
}  // namespace hetccl
