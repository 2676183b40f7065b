// Plan data in host memory: every step runs before the call returns.
#pragma once

#include <vector>

#include "algo/plan_data.h"

namespace hetccl {

class HostPlanData : public PlanData {
 public:
  void reduce(void* dst, const void* const* sources, int nsources, size_t count,
              const Reduction& reduction) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  char* scratch(size_t bytes) override;

 private:
  std::vector<char> scratch_;
};

}  // namespace hetccl
