#include "transport/lane_placement.h"

#include "util/error.h"

namespace hetccl {

size_t readSmallestPart(const ParamSpec& spec) {
  const size_t bytes = readBytes(spec);
  if (bytes != 0 && bytes < kMinSplitBytes)
    fail(ncclInvalidArgument,
         "%s=%zu: parts of at least %zu bytes, or 0 for the default", spec.name,
         bytes, kMinSplitBytes);
  return bytes;
}

}  // namespace hetccl
