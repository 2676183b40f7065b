#include "harness/nccl_handles.h"

#include <chrono>
#include <thread>

#include "harness/check.h"

namespace hetccl::mp {

HostStream::HostStream() {
  MP_CHECK_NCCL(hetcclStreamCreate(&stream_));
  MP_CHECK(stream_ != nullptr) << "hetcclStreamCreate gave a null stream";
}

HostStream::~HostStream() {
  if (stream_ != nullptr) MP_CHECK_NCCL(hetcclStreamDestroy(stream_));
}

void HostStream::synchronize() const {
  MP_CHECK_NCCL(hetcclStreamSynchronize(stream_));
}

Comm::~Comm() { destroy(); }

Comm& Comm::operator=(Comm&& other) noexcept {
  if (this != &other) {
    destroy();
    comm_ = other.release();
  }
  return *this;
}

ncclComm_t Comm::release() {
  ncclComm_t comm = comm_;
  comm_ = nullptr;
  return comm;
}

void Comm::destroy() {
  ncclComm_t comm = release();
  if (comm == nullptr) return;
  // A nonblocking communicator may finish finalizing in the background.
  constexpr double kFinalizeTimeoutSeconds = 30;
  MP_CHECK_NCCL(settle(ncclCommFinalize(comm), comm, kFinalizeTimeoutSeconds));
  MP_CHECK_NCCL(ncclCommDestroy(comm));
}

ncclResult_t waitWhileInProgress(ncclComm_t comm, double timeoutSeconds) {
  double deadline = nowSeconds() + timeoutSeconds;
  ncclResult_t state = ncclInProgress;
  while (true) {
    ncclResult_t result = ncclCommGetAsyncError(comm, &state);
    if (result != ncclSuccess) return result;
    if (state != ncclInProgress || nowSeconds() > deadline) return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

ncclResult_t settle(ncclResult_t result, ncclComm_t comm,
                    double timeoutSeconds) {
  if (result != ncclInProgress) return result;
  return waitWhileInProgress(comm, timeoutSeconds);
}

double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace hetccl::mp
