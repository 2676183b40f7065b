// A rank's sends to itself in a group are copies into its receives from
// itself: the n-th send into the n-th receive (NCCL's matching). No
// transport or vendor library is asked to talk to its own rank.
#pragma once

#include <vector>

#include "op/op.h"

namespace hetccl {

struct SelfCopy {
  void* to;
  const void* from;
  size_t bytes;
};

struct SelfTransfers {
  std::vector<SelfCopy> copies;
  std::vector<Op> others;  // the group's transfers with other ranks
};

// Fails with ncclInvalidUsage, before anything is copied, when the sends
// and receives of `rank` to itself do not pair up byte for byte.
SelfTransfers splitSelfTransfers(int rank, const std::vector<Op>& ops);

}  // namespace hetccl
