#include "runtime/reduction.h"

#include <cstring>

#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {

hetcclDeviceReduction deviceReduction(const Reduction& reduction, void* dst,
                                      const void* const* srcs, int nsrcs,
                                      size_t count) {
  HETCCL_CHECK_ARG(nsrcs >= 1 && nsrcs <= HETCCL_DEVICE_MAX_SOURCES,
                   "a device reduction combines 1 to %d sources, not %d",
                   HETCCL_DEVICE_MAX_SOURCES, nsrcs);
  hetcclDeviceReduction converted{};
  converted.dst = dst;
  for (int s = 0; s < nsrcs; ++s) converted.srcs[s] = srcs[s];
  converted.nsrcs = nsrcs;
  converted.count = count;
  converted.dtype = reduction.dtype;
  converted.op = reduction.op;
  // The module takes the scale by value: device code cannot read it from
  // host memory.
  converted.applyPreScale = reduction.preScale != nullptr;
  if (reduction.preScale != nullptr)
    std::memcpy(&converted.preScale, reduction.preScale,
                dtypeSize(reduction.dtype));
  converted.applyDivisor = reduction.divisor.has_value();
  converted.divisor = reduction.divisor.value_or(1);
  return converted;
}

}  // namespace hetccl
