// How far the GPU engine's stream got, without waiting for it: the stream
// raises a word in pinned host memory as it passes marks the engine
// enqueued (stream memory operations), and the host reads the word. No
// per-op CPU round trip: nobody synchronises with the stream to learn it.
#pragma once

#include <cstdint>

#include "runtime/device/device_resources.h"

namespace hetccl {

class StreamProgress {
 public:
  StreamProgress(const DeviceModule& module, void* stream);

  // Enqueues the next mark on the stream and returns it: reached(mark)
  // once the work enqueued before it is done. One thread enqueues.
  uint64_t mark();
  bool reached(uint64_t mark) const {
    return __atomic_load_n(word_, __ATOMIC_ACQUIRE) >= mark;
  }

 private:
  const DeviceModule& module_;
  void* stream_;
  PinnedHostMemory memory_;
  uint64_t* word_;
  uint64_t marks_ = 0;
};

}  // namespace hetccl
