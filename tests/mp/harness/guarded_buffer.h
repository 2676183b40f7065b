// A byte buffer with guard zones on both sides, to catch a library that
// writes past the end (or before the start) of what it was given.
#pragma once

#include <cstddef>
#include <vector>

namespace hetccl::mp {

class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes = 0);

  unsigned char* data() { return storage_.data() + kGuardBytes; }
  const unsigned char* data() const { return storage_.data() + kGuardBytes; }
  size_t size() const { return bytes_; }

  void fill(unsigned char value);
  // True when nothing outside [data(), data() + size()) was written.
  bool guardsIntact() const;

 private:
  static constexpr size_t kGuardBytes = 64;
  static unsigned char guardByte(size_t position);

  std::vector<unsigned char> storage_;
  size_t bytes_;
};

}  // namespace hetccl::mp
