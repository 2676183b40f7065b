#include "slot_bound.h"

#include <algorithm>

namespace hetccl::sim {

size_t SlotBound::slotsFor(size_t pieces) const {
  return std::max<size_t>(1, std::min(pieces, slots_));
}

void SlotBound::take(size_t n) {
  while (full()) {
    waiter_ = scheduler_.current();
    scheduler_.suspend();
  }
  waiter_ = -1;
  used_ += n;
}

void SlotBound::takeWhenFree(size_t n, std::function<void()> start) {
  queued_.push_back({n, std::move(start)});
  startQueued();
}

void SlotBound::give(size_t n) {
  used_ -= std::min(n, used_);
  startQueued();
  if (waiter_ >= 0 && !full()) {
    const int fiber = waiter_;
    waiter_ = -1;  // resumed once, however many slots come back
    scheduler_.resume(fiber);
  }
}

void SlotBound::startQueued() {
  while (!queued_.empty() && !full()) {
    Queued next = std::move(queued_.front());
    queued_.pop_front();
    used_ += next.n;
    next.start();
  }
}

}  // namespace hetccl::sim
