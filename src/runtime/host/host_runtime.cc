#include "runtime/host/host_runtime.h"

#include <sys/mman.h>

#include "util/error.h"

namespace hetccl {

HostRuntime& hostRuntimeImpl() {
  // Never destroyed: streams may still be in use while the process exits.
  static HostRuntime* runtime = new HostRuntime;
  return *runtime;
}

Runtime& hostRuntime() { return hostRuntimeImpl(); }

std::shared_ptr<HostStream> HostRuntime::find(StreamHandle stream) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = streams_.find(stream);
  if (it == streams_.end())
    fail(ncclInvalidArgument,
         "stream %p is not a HetCCL host stream: CPU ranks take a stream "
         "from hetcclStreamCreate, or NULL",
         static_cast<void*>(stream));
  return it->second;
}

void HostRuntime::checkStream(StreamHandle stream) const {
  if (stream != nullptr) find(stream);
}

void HostRuntime::enqueue(StreamHandle stream, StreamTask task) {
  if (stream == nullptr) {
    task();
    return;
  }
  find(stream)->enqueue(std::move(task));
}

void* HostRuntime::allocate(size_t bytes) {
  size_t length = bytes == 0 ? 1 : bytes;
  void* pointer = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pointer == MAP_FAILED)
    failErrno("cannot allocate %zu bytes of host memory", bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  allocations_.emplace(pointer, length);
  return pointer;
}

bool HostRuntime::owns(void* pointer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocations_.count(pointer) != 0;
}

void HostRuntime::release(void* pointer) {
  size_t length = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = allocations_.find(pointer);
    HETCCL_CHECK_ARG(it != allocations_.end(),
                     "pointer %p was not allocated by ncclMemAlloc, or was "
                     "already freed",
                     pointer);
    length = it->second;
    allocations_.erase(it);
  }
  munmap(pointer, length);
}

StreamHandle HostRuntime::createStream(AfterFailure afterFailure) {
  auto stream = std::make_shared<HostStream>(afterFailure);
  auto handle = reinterpret_cast<StreamHandle>(stream.get());
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.emplace(handle, std::move(stream));
  return handle;
}

void HostRuntime::destroyStream(StreamHandle stream) {
  std::shared_ptr<HostStream> owned = find(stream);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.erase(stream);
  }
  // The last reference (possibly this one) joins the thread after the
  // queued work is done.
}

void HostRuntime::synchronize(StreamHandle stream) {
  if (stream == nullptr) return;
  find(stream)->synchronize();
}

bool HostRuntime::idle(StreamHandle stream) {
  return stream == nullptr || find(stream)->idle();
}

}  // namespace hetccl
