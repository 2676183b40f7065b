#include "engine/gpu/plan/device_plan_data.h"

#include <algorithm>
#include <vector>

#include "util/error.h"

namespace hetccl {

DevicePlanData::DevicePlanData(const DeviceModule& module, void* stream,
                               size_t scratchBytes, StreamTimeline* timeline)
    : module_(module),
      stream_(stream),
      timeline_(timeline),
      scratchBytes_(scratchBytes),
      scratch_(module, scratchBytes) {}

// A launch combines at most HETCCL_DEVICE_MAX_SOURCES inputs; more are
// folded into dst in source order, the same on every rank.
void DevicePlanData::reduce(void* dst, const void* const* sources, int nsources,
                            size_t count, const Reduction& reduction) {
  if (count == 0) return;
  if (reduction.preScale && nsources > HETCCL_DEVICE_MAX_SOURCES)
    fail(ncclInternalError,
         "a pre-scaled reduction of %d inputs cannot be folded", nsources);
  markPhase(timeline_, StreamPhase::Reductions);
  std::vector<const void*> batch(sources, sources + nsources);
  Reduction step = reduction;
  std::optional<uint64_t> divisor = step.divisor;
  while (!batch.empty()) {
    int n = std::min<int>(static_cast<int>(batch.size()),
                          HETCCL_DEVICE_MAX_SOURCES);
    bool last = n == static_cast<int>(batch.size());
    step.divisor = last ? divisor : std::nullopt;
    hetcclDeviceReduction launch =
        deviceReduction(step, dst, batch.data(), n, count);
    module_.check(module_.api().reduceAsync(&launch, stream_),
                  "combining the domains' partials on the GPU");
    batch.erase(batch.begin(), batch.begin() + n);
    if (!last) batch.insert(batch.begin(), dst);
    step.preScale = nullptr;  // dst is scaled already
  }
}

void DevicePlanData::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  markPhase(timeline_, StreamPhase::OtherCopies);
  module_.check(module_.api().copyAsync(dst, src, bytes, stream_),
                "copying on the GPU engine's stream");
}

char* DevicePlanData::scratch(size_t bytes) {
  if (bytes > scratchBytes_)
    fail(ncclInternalError,
         "a plan asked for %zu bytes of GPU scratch; the engine has %zu", bytes,
         scratchBytes_);
  return scratch_.data();
}

}  // namespace hetccl
