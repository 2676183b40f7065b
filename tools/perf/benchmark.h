// The sweep: for every collective, type, op and size, check the results and
// time the out-of-place and in-place forms, then report one row.
#pragma once

#include <cstdint>
#include <vector>

#include "perf/buffer_check.h"
#include "perf/control.h"
#include "perf/device.h"
#include "perf/options.h"
#include "perf/rank_context.h"
#include "perf/report.h"

namespace hetccl {
namespace perf {

class Benchmark {
 public:
  Benchmark(const Options& options, const RankContext& context,
            Control& control, Reporter& reporter);

  // Runs the whole sweep. Returns the number of wrong result elements
  // summed over all ranks (the same on every rank).
  int64_t run();

 private:
  struct Case {
    const Collective* collective;
    const kit::DataType* type;
    const ReduceOp* op;  // nullptr for collectives that do not reduce
  };

  std::vector<Case> cases() const;
  // The distinct non-empty shapes of the size sweep for this case.
  std::vector<Shape> shapes(const Case& testCase) const;
  void runCase(const Case& testCase, Progress& progress);
  PlacementResult runPlacement(const Case& testCase, const CallContext& call,
                               const Shape& shape, bool inPlace,
                               BufferCheck& check);
  // One iteration: aggIters launches in one group, then a synchronize when
  // blocking.
  void launchIteration(const CallContext& call, const Shape& shape,
                       const CallBuffers& buffers);
  double combineTimes(double seconds);

  const Options& options_;
  RankContext context_;
  Control& control_;
  Reporter& reporter_;
  DeviceBuffer send_;
  DeviceBuffer recv_;
  int64_t totalWrong_ = 0;
};

}  // namespace perf
}  // namespace hetccl
