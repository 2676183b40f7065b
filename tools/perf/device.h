// Memory and streams of the rank's runtime, as the benchmark needs them.
// CPU ranks use host memory and HetCCL's host streams; GPU ranks use the
// vendor runtime (CUDA or HIP), loaded with dlopen so that the tool itself
// needs no vendor toolkit to build.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "hetccl.h"

namespace hetccl {
namespace perf {

class Device {
 public:
  virtual ~Device() = default;

  // E.g. "host" or "cuda:1 [0000:3b:00.0]".
  virtual std::string describe() const = 0;
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* pointer) = 0;
  // True when the CPU may read and write allocated memory directly.
  virtual bool hostAccessible() const = 0;
  virtual void copyToDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual void copyToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual cudaStream_t createStream() = 0;
  virtual void destroyStream(cudaStream_t stream) = 0;
  // Waits for all work queued on the stream; throws on an error.
  virtual void synchronize(cudaStream_t stream) = 0;
};

// Before the communicator exists: makes GPU number localRank % count current
// when a CUDA or HIP runtime with GPUs is present (as NCCL programs do), so
// that HetCCL puts the rank on it. Returns what it did, for the log.
std::string selectGpuForRank(int localRank);

// The Device for the runtime HetCCL chose for the communicator.
std::unique_ptr<Device> makeDevice(hetcclRuntimeKind_t kind);

// Memory allocated on a Device, released when it goes out of scope.
class DeviceBuffer {
 public:
  DeviceBuffer(Device& device, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return pointer_; }
  size_t size() const { return bytes_; }

 private:
  Device& device_;
  void* pointer_;
  size_t bytes_;
};

// A stream created on a Device, destroyed when it goes out of scope.
class DeviceStream {
 public:
  explicit DeviceStream(Device& device);
  ~DeviceStream();
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;

  cudaStream_t get() const { return stream_; }

 private:
  Device& device_;
  cudaStream_t stream_;
};

}  // namespace perf
}  // namespace hetccl
