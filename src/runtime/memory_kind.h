// Kinds of memory a buffer may be in, as bits of a set: what a link's
// transfers may be in, and what each GPU runtime's buffers are
// (gpu_runtimes.h).
#pragma once

#include <string>

namespace hetccl {

enum MemoryKind : unsigned {
  kHostMemory = 1u << 0,
  kCudaMemory = 1u << 1,
  kHipMemory = 1u << 2,
};

// "host, cuda": MemoryKind bits for messages.
std::string describeMemoryKinds(unsigned kinds);

}  // namespace hetccl
