// The NCCL vendor adaptor: a domain of NVIDIA GPU ranks runs its
// operations on a real NCCL communicator, call for call, on the caller's
// stream. This is the whole data path of a homogeneous NVIDIA
// communicator: no copies, no extra synchronisation, no extra launches.
// The RCCL adaptor (vendor/rccl/rccl_comm.h) is this same class over AMD's
// library, which exports the same API.
#pragma once

#include <memory>
#include <mutex>

#include "util/oob.h"
#include "vendor/nccl/nccl_library.h"
#include "vendor/executor.h"

namespace hetccl {

class NcclComm : public Executor {
 public:
  // Collective over `oob`: rank 0 asks NCCL for a unique id, the oob
  // spreads it, and every rank joins NCCL's communicator on its current
  // device.
  NcclComm(Oob& oob, const NcclLibrary& nccl, int device);
  ~NcclComm() override;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  // NCCL orders its work on the caller's streams: nothing is queued here.
  bool drain(double timeoutSeconds) override { return true; }

  // The library's device ordinal (ncclCommCuDevice; a HIP ordinal under
  // RCCL).
  int device() const;
  void abort() override;
  void finalize() override;
  ncclResult_t asyncError() const override;

  // Buffer registration, symmetric windows and device communicators of a
  // homogeneous GPU communicator are the library's: passed through.
  void* registerBuffer(void* buffer, size_t bytes);
  void deregisterBuffer(void* handle);
  ncclWindow_t registerWindow(void* buffer, size_t bytes, int flags);
  void deregisterWindow(ncclWindow_t window);
  void createDevComm(const ncclDevCommRequirements* requirements,
                     ncclDevComm* devComm);
  void destroyDevComm(const ncclDevComm* devComm);

 protected:
  // Makes a device of the library's runtime current on the calling thread.
  using MakeDeviceCurrent = void (*)(int device);
  NcclComm(Oob& oob, const NcclApiLibrary& library, int device,
           MakeDeviceCurrent makeCurrent);

 private:
  void issue(const Op& op, StreamHandle stream);
  // Throws Error(result, what the library said) unless result is
  // ncclSuccess.
  void check(ncclResult_t result, const char* call) const;

  const NcclApiLibrary& nccl_;
  ncclComm_t comm_ = nullptr;
};

// The process's NCCL, loaded on first use (a library handle is
// process-wide by nature); throws if there is none.
const NcclLibrary& processNccl();

// NCCL (and RCCL) call some of their own API functions through the dynamic
// linker. When the process has the library loaded in its global scope too
// (PyTorch loads it so), those calls can land in HetCCL's functions of the
// same name, which hand them back: this is the process's NCCL or RCCL to
// hand back to when `caller` (a return address) is inside it, else null.
// Never loads a library.
const NcclApi* ncclCalling(const void* caller);

// Makes a process-wide library (one that lives until the process exits)
// known to ncclCalling.
void recogniseCallsFrom(const NcclApiLibrary& library);

// The process-wide library of type Library (NcclLibrary, RcclLibrary),
// loaded on first use and known to ncclCalling; throws if there is none,
// and tries again on the next call.
template <typename Library>
const Library& processLibrary() {
  static std::once_flag once;
  static std::unique_ptr<Library> library;
  std::call_once(once, [] {
    library = Library::load();
    recogniseCallsFrom(*library);
  });
  return *library;
}

}  // namespace hetccl
