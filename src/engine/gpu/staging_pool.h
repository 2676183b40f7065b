// Pinned host slots that the GPU engine's transfers across domains pass
// through (links move host memory; the stream copies between a slot and
// the GPU). All are pinned when the engine is made: pinning memory while a
// caller's stream waits for the engine would serialise the GPU's streams
// (CUDA's implicit synchronisation) and deadlock it. A released slot is
// handed out again once the stream has passed the mark it was released
// at, so the GPU is done copying from or into it.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "engine/gpu/stream_progress.h"
#include "util/abort_signal.h"

namespace hetccl {

class StagingPool {
 public:
  StagingPool(const DeviceModule& module, const StreamProgress& progress,
              size_t slotBytes, int slots, int rank);

  // A free slot for up to slotBytes(); waits for one if all are taken
  // (plans keep at most two pipeline steps in flight, which the engine
  // sizes the pool for). Called by the thread that enqueues on the stream.
  char* acquire(size_t bytes, const AbortSignal& abort, double timeoutSeconds);
  // Any thread: `slot` is free once the stream reached `afterMark` (0:
  // now).
  void release(char* slot, uint64_t afterMark);

 private:
  struct Slot {
    char* data;
    bool inUse = false;
    uint64_t freeAfter = 0;
  };
  char* tryAcquire();

  const StreamProgress& progress_;
  const size_t slotBytes_;
  const int rank_;
  PinnedHostMemory memory_;
  std::mutex mutex_;
  std::vector<Slot> slots_;
};

}  // namespace hetccl
