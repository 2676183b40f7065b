// Small exchanges among the ranks that the benchmark needs outside the
// timed region (combining times and error counts, describing the ranks).
// They run through the library under test, on device memory of the rank's
// runtime.
#pragma once

#include <string>
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
  // Every rank's text, in rank order, each cut to kTextBytes - 1 bytes.
  static constexpr size_t kTextBytes = 512;
  std::vector<std::string> allGather(const std::string& mine);

 private:
  // Every rank's `bytes` bytes at `mine`, in rank order, into `all`.
  void allGatherBytes(const void* mine, size_t bytes, void* all);

  RankContext context_;
  DeviceBuffer scratch_;
};

}  // namespace perf
}  // namespace hetccl
