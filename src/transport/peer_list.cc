#include "transport/peer_list.h"

#include <algorithm>

#include "util/error.h"

namespace hetccl {

std::vector<int> checkedLinkPeers(const char* transport,
                                  const std::vector<int>& peers, int rank,
                                  int nranks) {
  std::vector<int> sorted = peers;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (int peer : sorted)
    HETCCL_CHECK_ARG(peer >= 0 && peer < nranks && peer != rank,
                     "%s transport: rank %d cannot link to rank %d (%d ranks)",
                     transport, rank, peer, nranks);
  return sorted;
}

}  // namespace hetccl
