// Which peer processes of a communicator have exited. A lost peer only
// matters to the waits that need it (a rank that finished its work and
// left harms nobody), so waits ask about their own peer.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hetccl {

class PeerLiveness {
 public:
  explicit PeerLiveness(int nranks);

  void markLost(int rank, const std::string& reason);
  bool lost(int rank) const;
  // Throws ncclRemoteError with the reason if `rank` was lost.
  void throwIfLost(int rank) const;

  // The same flags seen through another numbering: rank i of the view is
  // rank members[i] here (a domain's ranks within the communicator).
  std::shared_ptr<const PeerLiveness> subset(
      const std::vector<int>& members) const;

 private:
  struct State {
    explicit State(int nranks) : lost(nranks) {}
    std::vector<std::atomic<bool>> lost;
    std::mutex mutex;
    std::vector<std::string> reasons;
  };
  PeerLiveness(std::shared_ptr<State> state, std::vector<int> members)
      : state_(std::move(state)), members_(std::move(members)) {}
  int toShared(int rank) const {
    return members_.empty() ? rank : members_[rank];
  }

  std::shared_ptr<State> state_;
  std::vector<int> members_;  // empty: the identity
};

}  // namespace hetccl
