#include "util/peer_liveness.h"

#include "util/error.h"

namespace hetccl {

PeerLiveness::PeerLiveness(int nranks)
    : state_(std::make_shared<State>(nranks)) {
  state_->reasons.resize(nranks);
}

void PeerLiveness::markLost(int rank, const std::string& reason) {
  int shared = toShared(rank);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->reasons[shared] = reason;
  state_->lost[shared].store(true, std::memory_order_release);
}

bool PeerLiveness::lost(int rank) const {
  return rank >= 0 &&
         state_->lost[toShared(rank)].load(std::memory_order_acquire);
}

void PeerLiveness::throwIfLost(int rank) const {
  if (!lost(rank)) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  throw Error(ncclRemoteError, state_->reasons[toShared(rank)]);
}

std::shared_ptr<const PeerLiveness> PeerLiveness::subset(
    const std::vector<int>& members) const {
  std::vector<int> mapped;
  for (int member : members) mapped.push_back(toShared(member));
  return std::shared_ptr<const PeerLiveness>(
      new PeerLiveness(state_, std::move(mapped)));
}

}  // namespace hetccl
