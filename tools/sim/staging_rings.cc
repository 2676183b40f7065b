#include "staging_rings.h"

#include <algorithm>
#include <utility>

#include "engine/gpu/proxy/slot_sizes.h"
#include "sim_link.h"

namespace hetccl::sim {

size_t ringSlotsFor(size_t pieces) {
  return std::max<size_t>(1, std::min(pieces, kStagingRingSlots));
}

void SendRing::take(size_t n) {
  while (used_ >= kStagingRingSlots) {
    waiter_ = scheduler_.current();
    scheduler_.suspend();
  }
  used_ += n;
}

void SendRing::give(size_t n) {
  used_ -= std::min(n, used_);
  if (waiter_ < 0 || used_ >= kStagingRingSlots) return;
  scheduler_.resume(std::exchange(waiter_, -1));
}

uint64_t ReceiveRing::add(std::shared_ptr<SimRequest> request, size_t pieces) {
  unconsumed_.emplace_back(std::move(request), ringSlotsFor(pieces));
  postWhileFree();
  return consumed_ + unconsumed_.size() - 1;
}

void ReceiveRing::postWhileFree() {
  while (used_ < kStagingRingSlots &&
         posted_ - consumed_ < unconsumed_.size()) {
    const auto& [request, slots] = unconsumed_[posted_ - consumed_];
    used_ += slots;
    ++posted_;
    wires_.post(self_, request);
  }
}

void ReceiveRing::consumeThrough(uint64_t index) {
  while (consumed_ <= index && consumed_ < posted_) {
    const auto [request, slots] = unconsumed_.front();
    request->waitHere();
    unconsumed_.pop_front();
    ++consumed_;
    used_ -= slots;
    postWhileFree();
  }
}

}  // namespace hetccl::sim
