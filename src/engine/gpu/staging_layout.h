// Where the buffers of GPU ranks go in host memory when a heterogeneous
// communicator stages them: for each op, the device bytes this rank reads
// (copied in before the host plan runs) and writes (copied out after), laid
// out in one pinned staging area, and the op rewritten onto that area.
#pragma once

#include <cstddef>
#include <vector>

#include "vendor/op.h"

namespace hetccl {

struct StagingCopy {
  void* dst;
  const void* src;
  size_t bytes;
};

struct StagedOps {
  std::vector<Op> hostOps;             // the ops on staging memory
  std::vector<StagingCopy> copiesIn;   // device -> staging
  std::vector<StagingCopy> copiesOut;  // staging -> device
};

// Bytes of staging `ops` need on this rank.
size_t stagingBytes(const std::vector<Op>& ops, int rank, int nranks);

// Lays `ops` out from `base`, which holds stagingBytes(ops, ...) bytes.
// Where send and receive buffers overlap (in place), they share staging,
// so the host plan sees the same aliasing the caller made. Only what this
// rank reads is copied in and only what it writes is copied out: a
// non-root's receive buffer of a reduce stays untouched, as with NCCL.
StagedOps stageOps(const std::vector<Op>& ops, int rank, int nranks,
                   char* base);

}  // namespace hetccl
