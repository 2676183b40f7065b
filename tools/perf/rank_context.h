// The communicator, runtime and stream one rank runs the benchmark with.
#pragma once

#include "nccl.h"
#include "perf/device.h"

namespace hetccl {
namespace perf {

struct RankContext {
  ncclComm_t comm;
  int rank;
  int nranks;
  Device* device;
  cudaStream_t stream;
};

}  // namespace perf
}  // namespace hetccl
