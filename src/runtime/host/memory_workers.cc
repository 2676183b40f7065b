#include "runtime/host/memory_workers.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/host/host_reduce.h"
#include "util/cpu_cores.h"
#include "util/dtype.h"

namespace hetccl {

MemoryWorkers::MemoryWorkers(int helpers, size_t minPartBytes)
    : minPartBytes_(std::max<size_t>(1, minPartBytes)), helpers_(helpers) {}

void MemoryWorkers::copy(void* dst, const void* src, size_t bytes) {
  if (bytes < 2 * minPartBytes_) {  // one part: no hand-off
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return;
  }
  inParts(bytes, 1, [&](size_t first, size_t n) {
    std::memcpy(static_cast<char*>(dst) + first,
                static_cast<const char*>(src) + first, n);
  });
}

void MemoryWorkers::reduce(void* dst, const void* const* sources, int nsources,
                           size_t count, const Reduction& reduction) {
  const size_t elt = dtypeSize(reduction.dtype);
  if (count * elt < 2 * minPartBytes_)
    return hostReduce(dst, sources, nsources, count, reduction);
  inParts(count, elt, [&](size_t first, size_t n) {
    std::vector<const void*> from(nsources);
    for (int s = 0; s < nsources; ++s)
      from[s] = static_cast<const char*>(sources[s]) + first * elt;
    hostReduce(static_cast<char*>(dst) + first * elt, from.data(), nsources, n,
               reduction);
  });
}

void MemoryWorkers::inParts(
    size_t count, size_t elementBytes,
    const std::function<void(size_t first, size_t n)>& body) {
  if (count == 0) return;
  const size_t bytes = count * elementBytes;
  const int parts = static_cast<int>(std::min<size_t>(
      helpers_.parts(), std::max<size_t>(1, bytes / minPartBytes_)));
  // Whole cache lines per part where the elements allow.
  const size_t align = std::max<size_t>(1, 64 / elementBytes);
  const size_t share = (count / parts + align - 1) / align * align;
  std::lock_guard<std::mutex> job(jobMutex_);
  helpers_.run(parts, [&](int part) {
    const size_t first = std::min(count, share * part);
    const size_t last =
        part == parts - 1 ? count : std::min(count, first + share);
    if (last > first) body(first, last - first);
  });
}

int memoryHelpers(int setting, size_t hostRanks) {
  constexpr int kCoresPerThread = 2;
  constexpr int kMaxAutoThreads = 4;
  if (setting > 0) return setting - 1;
  return std::clamp(coresOfOneRank(hostRanks) / kCoresPerThread, 1,
                    kMaxAutoThreads) -
         1;
}

}  // namespace hetccl
