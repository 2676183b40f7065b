#include "engine/gpu/staging_pool.h"

#include "util/error.h"
#include "util/log.h"
#include "util/spin_wait.h"

namespace hetccl {

StagingPool::StagingPool(const DeviceModule& module,
                         const StreamProgress& progress, size_t slotBytes,
                         int slots, int rank)
    : progress_(progress),
      slotBytes_(slotBytes),
      rank_(rank),
      memory_(module, slotBytes * slots) {
  for (int i = 0; i < slots; ++i)
    slots_.push_back({memory_.data() + i * slotBytes});
  LOG_INFO(kLogAlloc, "rank %d: %d pinned staging slots of %zu bytes", rank_,
           slots, slotBytes);
}

char* StagingPool::acquire(size_t bytes, const AbortSignal& abort,
                           double timeoutSeconds) {
  if (bytes > slotBytes_)
    fail(ncclInternalError,
         "rank %d: a %zu-byte transfer does not fit a %zu-byte staging slot",
         rank_, bytes, slotBytes_);
  SpinWait wait(abort, nullptr, timeoutSeconds, "a free staging slot", -1);
  for (;;) {
    if (char* slot = tryAcquire()) return slot;
    wait.pause();
  }
}

char* StagingPool::tryAcquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Slot& slot : slots_) {
    if (slot.inUse || !progress_.reached(slot.freeAfter)) continue;
    slot.inUse = true;
    return slot.data;
  }
  return nullptr;
}

void StagingPool::release(char* slot, uint64_t afterMark) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t index = static_cast<size_t>(slot - memory_.data()) / slotBytes_;
  if (slot < memory_.data() || index >= slots_.size())
    fail(ncclInternalError, "rank %d: released a staging slot it does not own",
         rank_);
  slots_[index].inUse = false;
  slots_[index].freeAfter = afterMark;
}

}  // namespace hetccl
