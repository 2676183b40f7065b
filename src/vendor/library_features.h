// The NCCL API features only a vendor library can provide (buffer
// registration, symmetric windows, device communicators). A domain back-end
// that has them offers this interface through Executor::libraryFeatures();
// a communicator that runs on HetCCL's own engines has none.
//
// Thread safety: as the library's own calls (NCCL allows them from any
// thread, serialised per communicator by the caller).
#pragma once

#include <cstddef>

#include "nccl.h"

namespace hetccl {

class LibraryFeatures {
 public:
  virtual ~LibraryFeatures() = default;
  virtual void* registerBuffer(void* buffer, size_t bytes) = 0;
  virtual void deregisterBuffer(void* handle) = 0;
  virtual ncclWindow_t registerWindow(void* buffer, size_t bytes,
                                      int flags) = 0;
  virtual void deregisterWindow(ncclWindow_t window) = 0;
  virtual void createDevComm(const ncclDevCommRequirements* requirements,
                             ncclDevComm* devComm) = 0;
  virtual void destroyDevComm(const ncclDevComm* devComm) = 0;
};

}  // namespace hetccl
