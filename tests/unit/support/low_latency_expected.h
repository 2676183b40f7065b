// What each rank of a low-latency collective (device_module.h) must hold,
// computed on the host: for the unit test of the kernels' code and for the
// GPU check of the modules (tests/gpu/device_module_check.cc).
#pragma once

#include <cstring>
#include <vector>

#include "nccl.h"
#include "runtime/device/device_module.h"
#include "runtime/host/host_reduce.h"
#include "util/dtype.h"

namespace hetccl {

// Rank `rank`'s output of `c`, whose ranks' inputs are `inputs`: hostReduce
// of every input (of the rank's part, for reduce-scatter) in rank order,
// the inputs one after another (all-gather), or the root's input.
inline std::vector<char> lowLatencyExpected(
    const hetcclDeviceLowLatencyCollective& c,
    const std::vector<const char*>& inputs, int rank) {
  const ncclDataType_t dtype = ncclDataType_t(c.reduction.dtype);
  const size_t part = c.reduction.count * dtypeSize(dtype);
  std::vector<char> want(c.nranks * part + 8);
  switch (c.kind) {
    case hetcclLowLatencyAllReduce:
    case hetcclLowLatencyReduceScatter: {
      const size_t offset =
          c.kind == hetcclLowLatencyReduceScatter ? rank * part : 0;
      std::vector<const void*> sources;
      for (const char* input : inputs) sources.push_back(input + offset);
      Reduction reduction{dtype, ncclRedOp_t(c.reduction.op)};
      if (c.reduction.applyPreScale) reduction.preScale = &c.reduction.preScale;
      if (c.reduction.applyDivisor) reduction.divisor = c.reduction.divisor;
      hostReduce(want.data(), sources.data(), c.nranks, c.reduction.count,
                 reduction);
      want.resize(part);
      break;
    }
    case hetcclLowLatencyAllGather:
      for (int r = 0; r < c.nranks; ++r)
        std::memcpy(want.data() + r * part, inputs[r], part);
      want.resize(c.nranks * part);
      break;
    default:
      std::memcpy(want.data(), inputs[c.root], part);
      want.resize(part);
      break;
  }
  return want;
}

}  // namespace hetccl
