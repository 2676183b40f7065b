#include "engine/gpu/stream_progress.h"

namespace hetccl {

StreamProgress::StreamProgress(const DeviceModule& module, void* stream)
    : module_(module),
      stream_(stream),
      memory_(module, sizeof(uint64_t)),
      word_(reinterpret_cast<uint64_t*>(memory_.data())) {
  __atomic_store_n(word_, 0, __ATOMIC_RELEASE);
}

uint64_t StreamProgress::mark() {
  module_.check(module_.api().writeValue64(stream_, word_, ++marks_),
                "marking the engine stream's progress");
  return marks_;
}

}  // namespace hetccl
