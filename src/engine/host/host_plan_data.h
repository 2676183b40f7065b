// Plan data in host memory: every step runs before the call returns. A
// large copy or reduction is cut into element ranges shared with helper
// threads (runtime/host/memory_workers.h).
#pragma once

#include <cstddef>
#include <vector>

#include "algo/plan_data.h"
#include "engine/host/host_timeline.h"
#include "runtime/host/memory_workers.h"

namespace hetccl {

class HostPlanData : public PlanData {
 public:
  // Smallest range worth a thread of its own.
  static constexpr size_t kMinPartBytes = 1 << 20;

  // `timeline` (may be null) times the copies and reductions.
  explicit HostPlanData(int helpers, HostTimeline* timeline = nullptr)
      : workers_(helpers, kMinPartBytes), timeline_(timeline) {}

  void reduce(void* dst, const void* const* sources, int nsources, size_t count,
              const Reduction& reduction) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  char* scratch(size_t bytes) override;
  // Bytes of scratch the plans have asked for so far (held until the end).
  size_t scratchHeld() const { return scratch_.size(); }

 private:
  MemoryWorkers workers_;
  HostTimeline* const timeline_;
  std::vector<char> scratch_;
};

}  // namespace hetccl
