// Pinned host memory that the GPU engine's transfers across domains pass
// through (links move host memory; the stream copies between a slot and
// the GPU). One arena, pinned when the engine is made: pinning memory while
// a caller's stream waits for the engine would serialise the GPU's streams
// (CUDA's implicit synchronisation) and deadlock it. Slots are cut from it
// to the size of each transfer; a released slot is handed out again once
// the stream has passed the mark it was released at, so the GPU is done
// copying from or into it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "engine/gpu/stream_progress.h"
#include "util/abort_signal.h"

namespace hetccl {

class StagingPool {
 public:
  StagingPool(const DeviceModule& module, const StreamProgress& progress,
              size_t arenaBytes, int rank);

  // A slot of `bytes` (at most a quarter of the arena); waits for space
  // if the arena is taken (plans keep at most two pipeline steps in
  // flight, which the engine sizes the arena for). Called by the thread
  // that enqueues on the stream.
  char* acquire(size_t bytes, const AbortSignal& abort, double timeoutSeconds);
  // Any thread: `slot` is free once the stream reached `afterMark` (0:
  // now).
  void release(char* slot, uint64_t afterMark);

 private:
  // A run of the arena, from its offset (the map key) to the next run's.
  struct Run {
    bool inUse = false;
    uint64_t freeAfter = 0;  // a stream mark
  };
  char* tryAcquire(size_t bytes);
  bool reusable(const Run& run) const;
  size_t endOf(std::map<size_t, Run>::const_iterator run) const;

  const StreamProgress& progress_;
  const size_t arenaBytes_;
  const int rank_;
  PinnedHostMemory memory_;
  std::mutex mutex_;
  std::map<size_t, Run> runs_;
};

}  // namespace hetccl
