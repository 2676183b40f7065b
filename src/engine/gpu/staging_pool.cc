#include "engine/gpu/staging_pool.h"

#include <algorithm>
#include <iterator>

#include "util/error.h"
#include "util/log.h"
#include "util/spin_wait.h"

namespace hetccl {
namespace {

// Slots start on cache lines (and so does every copy into them).
constexpr size_t kAlignment = 256;

size_t alignedSize(size_t bytes) {
  return (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment *
         kAlignment;
}

}  // namespace

StagingPool::StagingPool(const DeviceModule& module,
                         const StreamProgress& progress, size_t arenaBytes,
                         int rank)
    : progress_(progress),
      arenaBytes_(alignedSize(arenaBytes)),
      rank_(rank),
      memory_(module, arenaBytes_) {
  runs_[0] = Run{};
  LOG_INFO(kLogAlloc, "rank %d: %zu bytes of pinned staging", rank_,
           arenaBytes_);
}

char* StagingPool::acquire(size_t bytes, const AbortSignal& abort,
                           double timeoutSeconds) {
  if (alignedSize(bytes) > arenaBytes_ / 4)
    fail(ncclInternalError,
         "rank %d: a %zu-byte transfer is more than a quarter of the %zu "
         "bytes of staging",
         rank_, bytes, arenaBytes_);
  SpinWait wait(abort, nullptr, timeoutSeconds, "free pinned staging", -1);
  for (;;) {
    if (char* slot = tryAcquire(alignedSize(bytes))) return slot;
    wait.pause();
  }
}

bool StagingPool::reusable(const Run& run) const {
  return !run.inUse && progress_.reached(run.freeAfter);
}

size_t StagingPool::endOf(std::map<size_t, Run>::const_iterator run) const {
  auto next = std::next(run);
  return next == runs_.end() ? arenaBytes_ : next->first;
}

// First fit: reusable neighbours merge as they are passed, and the run
// found is split, the rest staying free.
char* StagingPool::tryAcquire(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto run = runs_.begin(); run != runs_.end(); ++run) {
    if (!reusable(run->second)) continue;
    auto next = std::next(run);
    while (next != runs_.end() && reusable(next->second))
      next = runs_.erase(next);
    run->second.freeAfter = 0;
    if (endOf(run) - run->first < bytes) continue;
    if (endOf(run) - run->first > bytes) runs_[run->first + bytes] = Run{};
    run->second.inUse = true;
    return memory_.data() + run->first;
  }
  return nullptr;
}

void StagingPool::release(char* slot, uint64_t afterMark) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto run = runs_.find(static_cast<size_t>(slot - memory_.data()));
  if (run == runs_.end() || !run->second.inUse)
    fail(ncclInternalError,
         "rank %d: released staging it does not hold (offset %td)", rank_,
         slot - memory_.data());
  run->second.inUse = false;
  run->second.freeAfter = afterMark;
}

}  // namespace hetccl
