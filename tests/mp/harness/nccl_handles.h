// RAII owners for the library's handles, for use inside rank bodies. Each
// checks its calls with MP_CHECK_NCCL, so a failure ends the rank.
#pragma once

#include "hetccl.h"
#include "nccl.h"

namespace hetccl::mp {

// A HetCCL host stream.
class HostStream {
 public:
  HostStream();
  ~HostStream();
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  cudaStream_t get() const { return stream_; }
  void synchronize() const;  // fails the rank on error

 private:
  cudaStream_t stream_ = nullptr;
};

// A communicator, destroyed (after finalize) when the owner goes away.
class Comm {
 public:
  Comm() = default;
  explicit Comm(ncclComm_t comm) : comm_(comm) {}
  ~Comm();
  Comm(Comm&& other) noexcept : comm_(other.release()) {}
  Comm& operator=(Comm&& other) noexcept;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  ncclComm_t get() const { return comm_; }
  // Gives up ownership without destroying (e.g. after ncclCommAbort).
  ncclComm_t release();
  // ncclCommFinalize + ncclCommDestroy, checked.
  void destroy();

 private:
  ncclComm_t comm_ = nullptr;
};

// Polls ncclCommGetAsyncError until it is no longer ncclInProgress (or the
// time runs out) and returns what it settled on.
ncclResult_t waitWhileInProgress(ncclComm_t comm, double timeoutSeconds);

// For a nonblocking communicator: a call may answer ncclInProgress; then
// wait for the communicator to settle. Returns the final result.
ncclResult_t settle(ncclResult_t result, ncclComm_t comm,
                    double timeoutSeconds);

// Seconds since an arbitrary fixed point (steady clock).
double nowSeconds();

}  // namespace hetccl::mp
