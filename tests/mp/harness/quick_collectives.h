// Small, self-checking collectives for tests whose subject is something
// else (communicator creation, split, faults): they prove a communicator
// works, and fail the rank with context when it does not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"

namespace hetccl::mp {

// All-reduce (sum, int64, a few elements) of `contribution * (i + 1)`;
// checks every element equals `expectedTotal * (i + 1)`. A nonblocking
// communicator's ncclInProgress is waited out. `stream` NULL runs it now,
// else it is synchronized here.
void checkAllReduceSum(ncclComm_t comm, int64_t contribution,
                       int64_t expectedTotal, cudaStream_t stream,
                       const std::string& context);

// All-gather of one int64 per rank; returns what each rank contributed,
// indexed by rank in `comm`.
std::vector<int64_t> allGatherOne(ncclComm_t comm, int64_t mine,
                                  const std::string& context);

}  // namespace hetccl::mp
