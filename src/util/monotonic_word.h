// Counters in memory that another agent (a GPU stream) reads: they only
// ever go up, since a reader that saw a value has acted on it.
#pragma once

#include <cstdint>

namespace hetccl {

// Raises *word to `value` unless it is higher already. A compare-and-swap
// loop, as two writers may race (a proxy and an abort releasing every
// wait).
inline void raiseToAtLeast(uint64_t* word, uint64_t value) {
  uint64_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  while (seen < value &&
         !__atomic_compare_exchange_n(word, &seen, value, /*weak=*/true,
                                      __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
  }
}

}  // namespace hetccl
