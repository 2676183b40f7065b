#include "core/registrations.h"

#include "util/error.h"

namespace hetccl {

void* Registrations::add(void* buffer, size_t bytes) {
  auto range = std::make_unique<Range>(Range{buffer, bytes});
  void* handle = range.get();
  std::lock_guard<std::mutex> lock(mutex_);
  ranges_.emplace(handle, std::move(range));
  return handle;
}

void Registrations::remove(void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  HETCCL_CHECK_ARG(ranges_.erase(handle) == 1,
                   "handle %p was not registered with this communicator, or "
                   "was already deregistered",
                   handle);
}

}  // namespace hetccl
