// AMD's RCCL, loaded so that HetCCL can hand AMD domains to it. RCCL
// exports NCCL's API under NCCL's names, so it shares NCCL's function table
// and loading rules (domain/nccl_api/nccl_api_library.h): opened with
// RTLD_DEEPBIND, reached only through the table, HetCCL's own drop-in
// librccl.so.1 passed over.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "domain/nccl_api/nccl_api_library.h"
#include "util/params.h"

namespace hetccl {

// Where the library is (rccl_params.def).
#define HETCCL_PARAMS_FILE "domain/rccl/rccl_params.def"
#define HETCCL_PARAMS_LIST rcclParams
#include "util/declare_params.inc"

class RcclLibrary : public NcclApiLibrary {
 public:
  // Loads the first real RCCL among candidatePaths(); throws
  // ncclSystemError "no RCCL found (set HETCCL_RCCL_LIBRARY to its path);
  // looked in: ..." with every path tried and why it was passed over.
  static std::unique_ptr<RcclLibrary> load();
  // Where to look, in order: HETCCL_RCCL_LIBRARY (alone when set); the
  // directory of an already mapped libtorch*, libamdhip64* or librccl*
  // (PyTorch's ROCm wheels keep librccl.so in torch/lib); $ROCM_PATH/lib,
  // /opt/rocm/lib, /opt/rocm-*/lib (newest first); last the bare name
  // librccl.so.1, for the loader's own search path.
  static std::vector<std::string> candidatePaths();

 private:
  explicit RcclLibrary(SharedLibrary library)
      : NcclApiLibrary(std::move(library), "RCCL") {}
};

}  // namespace hetccl
