// A counter in shared memory that one process writes and others read.
#pragma once

#include <atomic>
#include <cstdint>

namespace hetccl {

// A monotonic counter in shared memory, alone on its cache line so that
// the writer and the reader of neighbouring counters do not contend. It is
// never reset, so a stale value can never be mistaken for a new one.
struct alignas(64) ShmCounter {
  std::atomic<uint64_t> value{0};

  void post(uint64_t v) { value.store(v, std::memory_order_release); }
  uint64_t load() const { return value.load(std::memory_order_acquire); }
};
static_assert(sizeof(ShmCounter) == 64, "one counter per cache line");
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "counters are shared between processes");

}  // namespace hetccl
