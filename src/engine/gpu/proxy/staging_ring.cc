#include "engine/gpu/proxy/staging_ring.h"

#include "util/monotonic_word.h"

namespace hetccl {

StagingRing::StagingRing(const DeviceModule& module, size_t slotBytes,
                         size_t slots)
    : slotBytes_(slotBytes),
      slots_(slots),
      slotMemory_(module, slotBytes * slots),
      counterMemory_(module, 2 * sizeof(uint64_t)),
      counters_(reinterpret_cast<uint64_t*>(counterMemory_.data())) {
  __atomic_store_n(streamCounter(), 0, __ATOMIC_RELEASE);
  __atomic_store_n(proxyCounter(), 0, __ATOMIC_RELEASE);
}

void StagingRing::raiseProxyCounter(uint64_t value) const {
  raiseToAtLeast(proxyCounter(), value);
}

}  // namespace hetccl
