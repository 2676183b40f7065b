#include "engine/host/host_plan_data.h"

#include <cstring>

#include "runtime/host/host_reduce.h"

namespace hetccl {

void HostPlanData::reduce(void* dst, const void* const* sources, int nsources,
                          size_t count, const Reduction& reduction) {
  hostReduce(dst, sources, nsources, count, reduction);
}

void HostPlanData::copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

char* HostPlanData::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

}  // namespace hetccl
