// Deterministic per-rank inputs whose reductions are exact in every type.
//
// Each element's value is a hash of (seed, rank, index) mapped to a small
// integer. The range is chosen per type and op so that every partial result,
// in whatever order the library combines the ranks, is exactly representable:
// for sums the magnitudes of all contributions add up to at most the type's
// exact-integer limit (e.g. 16 for fp8e4m3, 8 for fp8e5m2), and when there
// are more ranks than that limit only a rotating subset of ranks contributes
// to each element; for products the factors are +-1 or +-2 with at most
// maxPow2 twos per element. Results are then compared exactly, except for
// avg, whose division by the rank count rounds (it gets a tolerance).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kit/dtype.h"
#include "perf/reduce_op.h"

namespace hetccl {
namespace perf {

struct Expected {
  double value;
  double tolerance;  // 0: the result must equal value exactly
};

class ValuePattern {
 public:
  // `op` is nullptr for collectives that do not reduce.
  ValuePattern(const kit::DataType& type, const ReduceOp* op, int nranks,
               uint64_t seed);

  // The input of `rank` at element `index`.
  double value(int rank, size_t index) const;

  // The op applied to value(r, index) over all ranks r.
  Expected reduced(size_t index) const;

  static bool matches(double got, const Expected& expected);

 private:
  bool isActive(int rank, size_t index) const;

  const kit::DataType& type_;
  OpKind kind_;
  bool reduces_;
  int nranks_;
  uint64_t seed_;
  int64_t magnitude_;  // largest |value| an active rank contributes
  size_t
      activeStride_;  // rank r contributes to index i iff (i+r) % stride == 0
};

}  // namespace perf
}  // namespace hetccl
