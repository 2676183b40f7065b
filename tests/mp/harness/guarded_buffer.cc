#include "harness/guarded_buffer.h"

#include <cstring>

namespace hetccl::mp {

GuardedBuffer::GuardedBuffer(size_t bytes)
    : storage_(bytes + 2 * kGuardBytes), bytes_(bytes) {
  for (size_t i = 0; i < kGuardBytes; ++i) {
    storage_[i] = guardByte(i);
    storage_[kGuardBytes + bytes + i] = guardByte(i + kGuardBytes);
  }
}

void GuardedBuffer::fill(unsigned char value) {
  if (bytes_ > 0) std::memset(data(), value, bytes_);
}

bool GuardedBuffer::guardsIntact() const {
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (storage_[i] != guardByte(i) ||
        storage_[kGuardBytes + bytes_ + i] != guardByte(i + kGuardBytes)) {
      return false;
    }
  }
  return true;
}

unsigned char GuardedBuffer::guardByte(size_t position) {
  // Not a constant, so that a stray memset of any one value is caught.
  return static_cast<unsigned char>(0xa5 ^ (position * 37));
}

}  // namespace hetccl::mp
