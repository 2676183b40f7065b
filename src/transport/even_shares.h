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

}  // namespace hetccl
