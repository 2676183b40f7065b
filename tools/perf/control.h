// Small exchanges among the ranks that the benchmark needs outside the
// timed region (combining times and error counts, describing the ranks).
// They run through the library under test, on device memory of the rank's
// runtime.
#pragma once

#include <vector>

#include "perf/device.h"
#include "perf/rank_context.h"
#include "perf/report.h"

namespace hetccl {
namespace perf {

class Control {
 public:
  explicit Control(const RankContext& context);

  // ncclAllReduce of one double with `op`.
  double allReduce(double value, ncclRedOp_t op);
  // Every rank's RankInfo, in rank order.
  std::vector<RankInfo> allGather(const RankInfo& mine);

 private:
  RankContext context_;
  DeviceBuffer scratch_;
};

}  // namespace perf
}  // namespace hetccl
