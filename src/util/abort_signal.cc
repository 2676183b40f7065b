#include "util/abort_signal.h"

#include "util/error.h"

namespace hetccl {

void AbortSignal::raise(ncclResult_t code, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flag_.load(std::memory_order_relaxed)) return;
  code_ = code;
  reason_ = reason;
  flag_.store(true, std::memory_order_release);
}

ncclResult_t AbortSignal::code() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return code_;
}

std::string AbortSignal::reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reason_;
}

void AbortSignal::throwIfRaised() const {
  if (!raised()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  throw Error(code_, reason_);
}

}  // namespace hetccl
