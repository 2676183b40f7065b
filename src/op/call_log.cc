#include "op/call_log.h"

namespace hetccl {

void CallLog::record(const CallSignature& call) {
  if (call.pointToPoint()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  calls_[call.sequence % kKept] = call;
  latest_.store(call.sequence, std::memory_order_release);
}

std::optional<CallSignature> CallLog::find(uint64_t sequence) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const CallSignature& kept = calls_[sequence % kKept];
  if (sequence == 0 || kept.sequence != sequence) return std::nullopt;
  return kept;
}

}  // namespace hetccl
