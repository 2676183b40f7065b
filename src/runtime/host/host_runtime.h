// The host runtime: streams are HostStreams, created through hetccl.h.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/host/host_stream.h"
#include "runtime/runtime.h"

namespace hetccl {

class HostRuntime : public Runtime {
 public:
  RuntimeKind kind() const override { return RuntimeKind::Host; }
  void checkStream(StreamHandle stream) const override;
  void enqueue(StreamHandle stream, StreamTask task) override;

  // The memory of CPU ranks (ncclMemAlloc): page-aligned host memory.
  void* allocate(size_t bytes);
  // Throws ncclInvalidArgument for a pointer allocate() did not return.
  void release(void* pointer);
  bool owns(void* pointer) const;

  StreamHandle createStream(AfterFailure afterFailure = AfterFailure::RunOn);
  void destroyStream(StreamHandle stream);
  void synchronize(StreamHandle stream);
  bool idle(StreamHandle stream);

 private:
  // Looks the handle up so that a foreign or destroyed handle is an error
  // rather than a wild pointer. Holding a shared_ptr keeps the stream alive
  // while a call uses it, even if another thread destroys it meanwhile.
  std::shared_ptr<HostStream> find(StreamHandle stream) const;

  mutable std::mutex mutex_;
  std::unordered_map<StreamHandle, std::shared_ptr<HostStream>> streams_;
  std::unordered_map<void*, size_t> allocations_;
};

HostRuntime& hostRuntimeImpl();

}  // namespace hetccl
