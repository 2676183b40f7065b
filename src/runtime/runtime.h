// The device-runtime abstraction: what the library needs from the runtime
// that owns a rank's buffers and streams. The host runtime is built in; the
// CUDA and HIP runtimes are modules loaded at run time.
#pragma once

#include <functional>

#include "hetccl.h"

namespace hetccl {

enum class RuntimeKind {
  Host = hetcclRuntimeHost,
  Cuda = hetcclRuntimeCuda,
  Hip = hetcclRuntimeHip,
};

const char* runtimeKindName(RuntimeKind kind);

// The caller's stream, as passed through the NCCL API.
using StreamHandle = cudaStream_t;

// Work for a stream; it may throw hetccl::Error, which the stream records.
using StreamTask = std::function<void()>;

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual RuntimeKind kind() const = 0;

  // Throws ncclInvalidArgument if `stream` is not a stream of this runtime.
  virtual void checkStream(StreamHandle stream) const = 0;

  // Runs `task` on `stream` after everything enqueued before it. Where the
  // runtime has no such stream (the host runtime's NULL stream) the task runs
  // before the call returns and its error propagates to the caller.
  virtual void enqueue(StreamHandle stream, StreamTask task) = 0;
};

// The built-in runtime of CPU ranks; it lives as long as the process.
Runtime& hostRuntime();

}  // namespace hetccl
