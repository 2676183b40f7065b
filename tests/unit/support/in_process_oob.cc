#include "support/in_process_oob.h"

#include <chrono>
#include <cstring>

#include "util/error.h"

namespace hetccl {

void InProcessWorld::allGather(int rank, void* data, size_t bytesPerRank) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (arrived_ == 0) filling_.assign(bytesPerRank * nranks_, 0);
  if (bytesPerRank > 0)
    std::memcpy(filling_.data() + rank * bytesPerRank,
                static_cast<uint8_t*>(data) + rank * bytesPerRank,
                bytesPerRank);
  uint64_t generation = generation_;
  if (++arrived_ == nranks_) {
    if (hook_) {
      hook_(filling_.data(), bytesPerRank);
      hook_ = nullptr;
    }
    result_.swap(filling_);
    arrived_ = 0;
    ++generation_;
    released_.notify_all();
  } else if (!released_.wait_for(lock, std::chrono::seconds(20),
                                 [&] { return generation_ != generation; })) {
    fail(ncclSystemError, "test all-gather timed out");
  }
  if (bytesPerRank > 0)
    std::memcpy(data, result_.data(), bytesPerRank * nranks_);
}

}  // namespace hetccl
