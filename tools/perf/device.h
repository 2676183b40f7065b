// Memory and streams of the rank's runtime, as the benchmark needs them.
// CPU ranks use host memory and the host streams of the HetCCL under test;
// GPU ranks use the vendor runtime (CUDA or HIP), loaded with dlopen so that
// the tool itself needs no vendor toolkit to build.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "perf/nccl_api.h"

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
  // Waits for all work queued on the stream; throws on an error, also on
  // `comm`'s asynchronous error while it waits (null: none asked). A GPU
  // stream whose operation lost a peer waits until the communicator is
  // aborted, with NCCL as with HetCCL: only that error ends the wait.
  virtual void synchronize(cudaStream_t stream, ncclComm_t comm) = 0;
};

struct GpuSelection {
  bool found = false;  // a CUDA or HIP runtime with GPUs was present
  hetcclRuntimeKind_t runtime = hetcclRuntimeHost;  // of the GPU made current
  std::string text;                                 // what was done, for logs
};

// Before the communicator exists: makes GPU number localRank % count current
// when a CUDA or HIP runtime with GPUs is present (as NCCL programs do), so
// that the library puts the rank on it.
// With HETCCL_FORCE_CPU set (not 0) it finds none without loading any GPU
// runtime: every rank is then a CPU rank, however many GPUs the machine has.
GpuSelection selectGpuForRank(int localRank);
// HETCCL_FORCE_CPU is set to something other than 0 (the library's rule).
bool cpuRanksForced();

// Whether a CUDA or HIP runtime with GPUs is present, without changing the
// current device; `why` says what was found.
bool gpusPresent(std::string* why);

// The Device for the rank's runtime. Host ranks need the library's host
// streams (HetCCL's extensions).
std::unique_ptr<Device> makeDevice(hetcclRuntimeKind_t kind,
                                   const NcclApi& nccl);

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
