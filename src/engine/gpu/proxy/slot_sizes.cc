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

size_t SlotSizes::sizeFor(size_t bytes) const {
  if (bytes > largest_)
    fail(ncclInternalError,
         "a staged piece of %zu bytes is larger than the link's largest "
         "(%zu bytes)",
         bytes, largest_);
  // A ring with no slots yet pins them even for an empty piece.
  if (bytes <= slotBytes_ && slotBytes_ > 0) return 0;
  return std::min(largest_, std::max({kSmallestSlot, powerOfTwoAtLeast(bytes),
                                      2 * slotBytes_}));
}

}  // namespace hetccl
