// The peers a rank asks a transport to link it with.
#pragma once

#include <vector>

namespace hetccl {

// `peers` sorted and without repeats; throws ncclInvalidArgument (naming
// `transport`) for a rank out of range or this rank itself.
std::vector<int> checkedLinkPeers(const char* transport,
                                  const std::vector<int>& peers, int rank,
                                  int nranks);

}  // namespace hetccl
