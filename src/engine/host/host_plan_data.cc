#include "engine/host/host_plan_data.h"

namespace hetccl {

void HostPlanData::reduce(void* dst, const void* const* sources, int nsources,
                          size_t count, const Reduction& reduction) {
  HostTimeline::Span span(timeline_, HostPhase::Reductions);
  workers_.reduce(dst, sources, nsources, count, reduction);
}

void HostPlanData::copy(void* dst, const void* src, size_t bytes) {
  HostTimeline::Span span(timeline_, HostPhase::Copies);
  workers_.copy(dst, src, bytes);
}

char* HostPlanData::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

}  // namespace hetccl
