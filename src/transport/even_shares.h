// How a link cuts a transfer into parts that several lanes carry at once:
// even shares, the first ones a byte longer where the bytes do not divide,
// so that both ends cut it alike from its size alone.
#pragma once

#include <cstddef>

namespace hetccl {

// The length of share `index` of `bytes` cut into `shares` shares.
inline size_t evenShare(size_t bytes, size_t shares, size_t index) {
  return bytes / shares + (index < bytes % shares ? 1 : 0);
}

// The same in whole units of `unit` bytes (the last share takes the bytes
// short of a unit), so that every share starts on a unit of the buffer:
// one that a receive combines as it arrives holds whole elements.
inline size_t alignedShare(size_t bytes, size_t shares, size_t index,
                           size_t unit) {
  const size_t units = evenShare(bytes / unit, shares, index) * unit;
  return index + 1 == shares ? units + bytes % unit : units;
}

}  // namespace hetccl
