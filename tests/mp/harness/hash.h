// A 64-bit digest of a buffer, for comparing results bitwise across ranks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hetccl::mp {

// FNV-1a over the bytes, folded with the length (so "" and "\0" differ).
uint64_t hashBytes(const void* data, size_t bytes);

}  // namespace hetccl::mp
