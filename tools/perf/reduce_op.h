// The reduction operations the benchmark sweeps over. PreMulSum is not an
// NCCL enum value: it is created per communicator and type at run time.
#pragma once

#include <string>
#include <vector>

#include "nccl.h"

namespace hetccl {
namespace perf {

enum class OpKind { kSum, kProd, kMax, kMin, kAvg, kPreMulSum };

struct ReduceOp {
  OpKind kind;
  const char* name;
  ncclRedOp_t builtin;  // unused for kPreMulSum
};

// sum, prod, max, min, avg, premulsum.
const std::vector<ReduceOp>& allReduceOps();

// Accepts the names above and "mulsum"; nullptr if unknown.
const ReduceOp* findReduceOp(const std::string& name);

// The scalar that PreMulSum multiplies every input by. A power of two, so
// that the scaled results stay exact in every type.
constexpr double kPreMulScalar = 2.0;

}  // namespace perf
}  // namespace hetccl
