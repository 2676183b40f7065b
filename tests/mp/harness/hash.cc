#include "harness/hash.h"

namespace hetccl::mp {

uint64_t hashBytes(const void* data, size_t bytes) {
  constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  constexpr uint64_t kPrime = 0x100000001b3ull;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t hash = kOffsetBasis;
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= kPrime;
  }
  // Fold in the length so that buffers that differ only by trailing zero
  // bytes still differ.
  hash ^= static_cast<uint64_t>(bytes);
  hash *= kPrime;
  return hash;
}

}  // namespace hetccl::mp
