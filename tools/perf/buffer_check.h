// Writes the inputs of one run into the rank's buffers (and poisons the
// places the collective must overwrite), and afterwards counts the result
// elements that differ from what the collective must produce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kit/dtype.h"
#include "perf/collectives.h"
#include "perf/device.h"
#include "perf/reduce_op.h"
#include "perf/value_pattern.h"

namespace hetccl {
namespace perf {

struct CheckCase {
  const Collective* collective;
  const kit::DataType* type;
  const ReduceOp* op;  // nullptr for collectives that do not reduce
  int rank;
  int nranks;
  int root;
};

class BufferCheck {
 public:
  BufferCheck(const CheckCase& checkCase, Device& device);

  // Fills the buffers that the run with these arguments reads, from the
  // pattern selected by `seed`.
  void prepare(bool inPlace, const Shape& shape, void* sendBase, void* recvBase,
               uint64_t seed);

  // For runs without a check (-c 0), where only the timing counts: fills
  // `bytes` at `region` with valid inputs of the type (one staging slice of
  // the pattern, repeated), so that no NaN or denormal can slow a reduction
  // down. Far cheaper than prepare() per size at gigabyte sizes on GPUs.
  void fillForTiming(void* region, size_t bytes);

  // The number of elements of this rank's result that are wrong (0 where
  // the rank has no result, e.g. non-root ranks of reduce).
  int64_t countWrong(bool inPlace, const Shape& shape, void* sendBase,
                     void* recvBase, uint64_t seed);

 private:
  ValuePattern pattern(uint64_t seed) const;
  // Stores generate(k) for k < count at `region`, through a host staging
  // buffer when the device memory is not host-accessible.
  template <typename Generate>
  void writeRegion(void* region, size_t count, const Generate& generate);
  // Counts k < count where the element at `region` does not match
  // expect(k).
  template <typename Expect>
  int64_t countMismatches(const void* region, size_t count,
                          const Expect& expect);

  CheckCase case_;
  Device& device_;
  std::vector<char> staging_;
};

}  // namespace perf
}  // namespace hetccl
