// The one description of a reduction that the engines run: the host collectives
// takes it as it is, the device modules (whose table is a C ABI) as a
// hetcclDeviceReduction converted from it here. ncclAvg and PreMulSum are
// expressed over the four base operators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "nccl.h"
#include "runtime/device/device_module.h"

namespace hetccl {

struct Reduction {
  ncclDataType_t dtype = ncclFloat32;
  ncclRedOp_t op = ncclSum;  // ncclSum, ncclProd, ncclMax or ncclMin
  // PreMulSum: every input is multiplied by this one element of dtype
  // before combining; null for none.
  const void* preScale = nullptr;
  // Avg: the combined result is divided by this; integer types use integer
  // division (truncation toward zero, like C), floating types true division.
  std::optional<uint64_t> divisor = std::nullopt;
};

// `reduction` of `nsrcs` buffers of `count` elements into `dst`, for
// reduceAsync of a device module.
hetcclDeviceReduction deviceReduction(const Reduction& reduction, void* dst,
                                      const void* const* srcs, int nsrcs,
                                      size_t count);

}  // namespace hetccl
