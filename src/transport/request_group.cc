#include "transport/request_group.h"

#include <algorithm>

namespace hetccl {

bool RequestGroup::done() {
  while (next_ < parts_.size() && parts_[next_]->done()) ++next_;
  return next_ == parts_.size();
}

void RequestGroup::wait(const AbortSignal& abort, double timeoutSeconds) {
  for (; next_ < parts_.size(); ++next_)
    parts_[next_]->wait(abort, timeoutSeconds);
}

int RequestGroup::peer() const {
  if (parts_.empty()) return -1;
  return parts_[std::min(next_, parts_.size() - 1)]->peer();
}

TransferWay RequestGroup::way() const {
  return parts_.empty() ? TransferWay::kUnknown : parts_.front()->way();
}

// Each part counts as one piece: a part that is itself a group (a tcp
// transfer striped over lanes) is done when all of its own are.
PieceCount RequestGroup::pieces() const {
  PieceCount count{0, static_cast<uint32_t>(parts_.size())};
  for (const auto& part : parts_) {
    const PieceCount own = part->pieces();
    if (own.total > 0 && own.done == own.total) ++count.done;
  }
  return count;
}

std::shared_ptr<TransferRequest> requestFor(
    std::vector<std::shared_ptr<TransferRequest>> parts) {
  if (parts.size() == 1) return parts.front();
  return std::make_shared<RequestGroup>(std::move(parts));
}

}  // namespace hetccl
