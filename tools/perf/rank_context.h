// The library, communicator, runtime and stream one rank runs the benchmark
// with.
#pragma once

#include "perf/device.h"
#include "perf/nccl_api.h"

namespace hetccl {
namespace perf {

struct RankContext {
  const NcclApi* nccl;
  ncclComm_t comm;
  int rank;
  int nranks;
  Device* device;
  cudaStream_t stream;
};

}  // namespace perf
}  // namespace hetccl
