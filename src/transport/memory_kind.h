// Kinds of memory a link's transfers may be in, as bits of a set.
#pragma once

namespace hetccl {

enum MemoryKind : unsigned {
  kHostMemory = 1u << 0,
  kCudaMemory = 1u << 1,
  kHipMemory = 1u << 2,
};

}  // namespace hetccl
