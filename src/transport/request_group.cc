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

std::shared_ptr<TransferRequest> requestFor(
    std::vector<std::shared_ptr<TransferRequest>> parts) {
  if (parts.size() == 1) return parts.front();
  return std::make_shared<RequestGroup>(std::move(parts));
}

}  // namespace hetccl
