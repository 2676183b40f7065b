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

size_t SlotSizes::grow(size_t bytes) {
  if (bytes > largest_)
    fail(ncclInternalError,
         "a staged piece of %zu bytes is larger than the link's largest "
         "(%zu bytes)",
         bytes, largest_);
  if (bytes <= slotBytes_) return 0;
  slotBytes_ = std::min(
      largest_,
      std::max({kSmallestSlot, powerOfTwoAtLeast(bytes), 2 * slotBytes_}));
  pinned_ += slots_ * slotBytes_;
  return slotBytes_;
}

}  // namespace hetccl
