// The UCX module and the process's one UCX context. Both are loaded at the
// first communicator that needs UCX, never when HetCCL itself loads (UCX is
// unusable in a child forked after it was initialised), and kept until the
// process exits (UCX cannot be unloaded cleanly).
#pragma once

#include <string>

#include "transport/ucx/ucx_module.h"
#include "util/shared_library.h"

namespace hetccl {

class UcxLibrary {
 public:
  // Loads the module and creates the context; throws ncclSystemError.
  // The process's one instance is ucxLibrary()'s.
  UcxLibrary();

  const hetcclUcxModuleTable& table() const { return *table_; }
  hetcclUcxContext* context() const { return context_; }
  const std::string& modulePath() const { return path_; }
  // "1.13.1".
  const std::string& version() const { return version_; }
  // UCX's transports here: "tcp/lo, posix/memory, rc_mlx5/mlx5_0:1".
  const std::string& transports() const { return transports_; }
  // MemoryKind bits of what UCX moves without staging.
  unsigned memoryKinds() const { return memoryKinds_; }
  // Whether UCX has an RDMA transport here (rc, dc or ud).
  bool hasRdma() const { return hasRdma_; }

  // Throws ncclSystemError "`what` failed: UCX error (message)" unless
  // `status` is 0.
  void check(int status, const char* what) const;

  UcxLibrary(const UcxLibrary&) = delete;
  UcxLibrary& operator=(const UcxLibrary&) = delete;

 private:
  SharedLibrary library_;
  std::string path_;
  const hetcclUcxModuleTable* table_ = nullptr;
  hetcclUcxContext* context_ = nullptr;
  std::string version_;
  std::string transports_;
  unsigned memoryKinds_ = 0;
  bool hasRdma_ = false;
};

// The library, loaded at the first call. Throws ncclSystemError saying why
// UCX cannot be used (the module or UCX's libraries missing, an ABI
// mismatch, a context UCX refused); the first failure is kept and thrown
// again, so one process asks UCX once.
const UcxLibrary& ucxLibrary();

// Whether UCX transport names (as transports() lists them) include one
// that moves data by RDMA: rc, dc or ud on an InfiniBand/RoCE device.
bool listsRdmaTransport(const std::string& transports);

}  // namespace hetccl
