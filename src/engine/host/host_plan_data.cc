#include "engine/host/host_plan_data.h"

#include <algorithm>
#include <cstring>

#include "runtime/host/host_reduce.h"
#include "util/dtype.h"

namespace hetccl {

void HostPlanData::reduce(void* dst, const void* const* sources, int nsources,
                          size_t count, const Reduction& reduction) {
  const size_t elt = dtypeSize(reduction.dtype);
  inParts(count, elt, [&](size_t first, size_t n) {
    std::vector<const void*> from(nsources);
    for (int s = 0; s < nsources; ++s)
      from[s] = static_cast<const char*>(sources[s]) + first * elt;
    hostReduce(static_cast<char*>(dst) + first * elt, from.data(), nsources, n,
               reduction);
  });
}

void HostPlanData::copy(void* dst, const void* src, size_t bytes) {
  inParts(bytes, 1, [&](size_t first, size_t n) {
    std::memcpy(static_cast<char*>(dst) + first,
                static_cast<const char*>(src) + first, n);
  });
}

char* HostPlanData::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void HostPlanData::inParts(
    size_t count, size_t elementBytes,
    const std::function<void(size_t first, size_t n)>& body) {
  if (count == 0) return;
  const size_t bytes = count * elementBytes;
  const int parts = static_cast<int>(std::min<size_t>(
      helpers_.parts(), std::max<size_t>(1, bytes / kMinPartBytes)));
  // Whole cache lines per part where the elements allow.
  const size_t align = std::max<size_t>(1, 64 / elementBytes);
  const size_t share = (count / parts + align - 1) / align * align;
  helpers_.run(parts, [&](int part) {
    const size_t first = std::min(count, share * part);
    const size_t last =
        part == parts - 1 ? count : std::min(count, first + share);
    if (last > first) body(first, last - first);
  });
}

}  // namespace hetccl
