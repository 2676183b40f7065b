#include "core/subset_oob.h"

#include <algorithm>

#include "bootstrap/bootstrap.h"

namespace hetccl {

SubsetOob::SubsetOob(Bootstrap& bootstrap, std::vector<int> members,
                     uint32_t tagSpace)
    : bootstrap_(bootstrap),
      members_(std::move(members)),
      rank_(static_cast<int>(
          std::find(members_.begin(), members_.end(), bootstrap.rank()) -
          members_.begin())),
      tagSpace_(tagSpace) {}

// A ring: in step s each member passes on the slot it received in step
// s-1, so after n-1 steps everyone has every slot.
void SubsetOob::allGather(void* data, size_t bytesPerRank) {
  int n = nranks();
  uint32_t tag = nextTag();
  if (n == 1) return;
  auto* slots = static_cast<char*>(data);
  int next = members_[(rank_ + 1) % n];
  int previous = members_[(rank_ + n - 1) % n];
  bootstrap_.runExchange(tag, members_, [&] {
    for (int step = 0; step < n - 1; ++step) {
      int sendSlot = (rank_ - step + n) % n;
      int recvSlot = (rank_ - step - 1 + n) % n;
      bootstrap_.send(next, tag, slots + sendSlot * bytesPerRank, bytesPerRank);
      bootstrap_.recv(previous, tag, slots + recvSlot * bytesPerRank,
                      bytesPerRank);
    }
  });
}

void SubsetOob::barrier() {
  std::vector<char> token(nranks(), 0);
  allGather(token.data(), 1);
}

}  // namespace hetccl
