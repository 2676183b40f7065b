// A domain run by a vendor library with the NCCL API (NVIDIA's NCCL, AMD's
// RCCL): its operations go to the library's communicator, call for call,
// on the caller's stream. This is the whole data path of a homogeneous GPU
// communicator: no copies, no extra synchronisation, no extra launches.
//
// Thread safety: launch() from the communicator's owner; abort() from any
// thread at any time, also while a launch is inside the library (NCCL's own
// rule for ncclCommAbort); the rest from the owner.
#pragma once

#include <atomic>
#include <functional>

#include "domain/nccl_api/nccl_api_library.h"
#include "op/executor.h"
#include "op/library_features.h"
#include "util/oob.h"

namespace hetccl {

class NcclApiComm : public Executor, public LibraryFeatures {
 public:
  // Makes a device of the library's runtime current on the calling thread.
  using MakeDeviceCurrent = void (*)(int device);
  // The library, loaded on first use; throws where it cannot be found.
  using LoadLibrary = std::function<const NcclApiLibrary&()>;

  // Collective over `oob`: every rank loads the library (`vendor`, "NCCL"
  // or "RCCL", names it in messages) and makes `device` current, rank 0
  // asks the library for a unique id, the oob spreads it, and every rank
  // joins the library's communicator. A rank that fails before the join (a
  // node without the library, a device that cannot be made current) fails
  // every rank's init at once, each naming it, its host and why.
  NcclApiComm(Oob& oob, const char* vendor, const LoadLibrary& loadLibrary,
              int device, MakeDeviceCurrent makeCurrent);
  ~NcclApiComm() override;
  NcclApiComm(const NcclApiComm&) = delete;
  NcclApiComm& operator=(const NcclApiComm&) = delete;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  // The library orders its work on the caller's streams: nothing is queued
  // here.
  bool drain(double timeoutSeconds) override { return true; }
  void abort() override;
  void finalize() override;
  ncclResult_t asyncError() const override;
  LibraryFeatures* libraryFeatures() override { return this; }

  // The library's device ordinal (ncclCommCuDevice; a HIP ordinal under
  // RCCL).
  int device() const;

  void* registerBuffer(void* buffer, size_t bytes) override;
  void deregisterBuffer(void* handle) override;
  ncclWindow_t registerWindow(void* buffer, size_t bytes, int flags) override;
  void deregisterWindow(ncclWindow_t window) override;
  void createDevComm(const ncclDevCommRequirements* requirements,
                     ncclDevComm* devComm) override;
  void destroyDevComm(const ncclDevComm* devComm) override;
  void groupStart() override;
  void groupEnd() override;
  const void* library() const override { return library_; }
  std::string describe() const override;

 private:
  // The library's communicator; throws once abort() has taken it.
  ncclComm_t comm() const;
  void issue(ncclComm_t comm, const Op& op, StreamHandle stream);
  // Throws Error(result, what the library said) unless result is
  // ncclSuccess.
  void check(ncclResult_t result, const char* call) const;

  const NcclApiLibrary* library_ = nullptr;
  // Taken (set to null) by abort(), which may run on another thread.
  std::atomic<ncclComm_t> comm_{nullptr};
};

}  // namespace hetccl
