#include "engine/gpu/proxy/slot_sizes.h"

#include <algorithm>

#include "util/error.h"

namespace hetccl {
namespace {

size_t powerOfTwoAtLeast(size_t bytes) {
  size_t size = 1;
  while (size < bytes) size <<= 1;
  return size;
}

}  // namespace

size_t SlotSizes::grow(uint64_t piece, size_t bytes) {
  if (bytes > largest_)
    fail(ncclInternalError,
         "a staged piece of %zu bytes is larger than the link's largest "
         "(%zu bytes)",
         bytes, largest_);
  size_t& size = sizes_[slotOf(piece)];
  if (bytes <= size) return 0;
  size = std::min(
      largest_, std::max({kSmallestSlot, powerOfTwoAtLeast(bytes), 2 * size}));
  pinned_ += size;
  return size;
}

}  // namespace hetccl
