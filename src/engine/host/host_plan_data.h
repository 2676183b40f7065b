// Plan data in host memory: every step runs before the call returns. A
// large copy or reduction is cut into element ranges shared with helper
// threads (helper_threads.h).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "algo/plan_data.h"
#include "engine/host/helper_threads.h"

namespace hetccl {

class HostPlanData : public PlanData {
 public:
  // Smallest range worth a thread of its own.
  static constexpr size_t kMinPartBytes = 1 << 20;

  explicit HostPlanData(int helpers) : helpers_(helpers) {}

  void reduce(void* dst, const void* const* sources, int nsources, size_t count,
              const Reduction& reduction) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  char* scratch(size_t bytes) override;

 private:
  // body(first, n) for ranges of `count` elements of `elementBytes` that
  // together cover [0, count), in parallel where they are large enough.
  void inParts(size_t count, size_t elementBytes,
               const std::function<void(size_t first, size_t n)>& body);

  HelperThreads helpers_;
  std::vector<char> scratch_;
};

}  // namespace hetccl
