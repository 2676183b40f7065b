// The NCCL API features only a vendor library can provide (buffer
// registration, symmetric windows, device communicators). A domain back-end
// that has them offers this interface through Executor::libraryFeatures();
// a communicator that runs on HetCCL's own engines has none.
//
// Thread safety: as the library's own calls (NCCL allows them from any
// thread, serialised per communicator by the caller).
#pragma once

#include <cstddef>
#include <string>

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

  // The library's own group, for a HetCCL group that spans several of its
  // communicators: they must reach it as one group (its group end waits
  // for every rank of a first collective, so communicators issued one
  // after another from one thread would wait for each other forever).
  virtual void groupStart() = 0;
  virtual void groupEnd() = 0;
  // Which loaded library this is: communicators with the same one group
  // together.
  virtual const void* library() const = 0;
  // Its name, version and file ("NCCL 2.28.9, /usr/lib/libnccl.so.2"), for
  // hetcclCommDomainLibrary.
  virtual std::string describe() const = 0;
};

}  // namespace hetccl
