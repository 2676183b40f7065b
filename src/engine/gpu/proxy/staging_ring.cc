#include "engine/gpu/proxy/staging_ring.h"

#include <cstring>

#include "runtime/device/device_module.h"
#include "util/monotonic_word.h"

namespace hetccl {

StagingRing::StagingRing(const DeviceModule& module, size_t largestPiece,
                         size_t slots, uint64_t* counters)
    : module_(module), sizes_(largestPiece, slots), counters_(counters) {
  __atomic_store_n(streamCounter(), 0, __ATOMIC_RELEASE);
  __atomic_store_n(proxyCounter(), 0, __ATOMIC_RELEASE);
}

char* StagingRing::slotFor(uint64_t piece, size_t bytes) {
  if (const size_t slotBytes = sizes_.sizeFor(bytes)) {
    memory_.emplace_back(module_, slots() * slotBytes);
    sizes_.grow(slotBytes);
  }
  return memory_.back().data() + (piece % slots()) * sizes_.slotBytes();
}

void StagingRing::raiseProxyCounter(uint64_t value) const {
  raiseToAtLeast(proxyCounter(), value);
}

// Pages of 512 words: a link takes 4 of them, so a page serves 127 links
// beside the zeros (an allocation each would pin a page per link).
uint64_t* StagingRings::takeWords(size_t count) {
  constexpr size_t kPageWords = 512;
  std::lock_guard<std::mutex> lock(mutex_);
  if (counterPages_.empty() || wordsTaken_ + count > kPageWords) {
    counterPages_.emplace_back(module_, kPageWords * sizeof(uint64_t));
    std::memset(counterPages_.back().data(), 0, kPageWords * sizeof(uint64_t));
    wordsTaken_ = 0;
  }
  auto* words =
      reinterpret_cast<uint64_t*>(counterPages_.back().data()) + wordsTaken_;
  wordsTaken_ += count;
  return words;
}

StagingRing& StagingRings::make(size_t largestPiece, size_t slots,
                                uint64_t* counters) {
  auto ring =
      std::make_unique<StagingRing>(module_, largestPiece, slots, counters);
  std::lock_guard<std::mutex> lock(mutex_);
  rings_.push_back(std::move(ring));
  return *rings_.back();
}

size_t StagingRings::pinnedBytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t total = 0;
  for (auto& ring : rings_) total += ring->pinnedBytes();
  return total;
}

void StagingRings::releaseWaits() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& ring : rings_)
    ring->raiseProxyCounter(HETCCL_DEVICE_WAIT_RELEASED);
}

void StagingRings::zeroCounters(void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& ring : rings_)
    for (uint64_t* counter : {ring->streamCounter(), ring->proxyCounter()})
      module_.check(module_.api().writeValue64(stream, counter, 0),
                    "setting a staging ring's counters to 0");
}

}  // namespace hetccl
