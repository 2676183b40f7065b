// NVIDIA's NCCL, loaded so that HetCCL can hand NVIDIA domains to it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "domain/nccl_api/nccl_api_library.h"
#include "util/params.h"

namespace hetccl {

// Where the library is (nccl_params.def).
#define HETCCL_PARAMS_FILE "domain/nccl/nccl_params.def"
#define HETCCL_PARAMS_LIST ncclParams
#include "util/declare_params.inc"

// NVIDIA's NCCL.
class NcclLibrary : public NcclApiLibrary {
 public:
  // Loads the first real NCCL among candidatePaths(); throws
  // ncclSystemError naming every path tried and why it was passed over.
  static std::unique_ptr<NcclLibrary> load();
  // Where to look, in order: HETCCL_NCCL_LIBRARY (alone when set); the lib
  // directory of a PyTorch wheel's NVIDIA packages already mapped into
  // this process; the system library directories; the CUDA toolkit
  // ($CUDA_HOME, /usr/local/cuda).
  static std::vector<std::string> candidatePaths();

 private:
  explicit NcclLibrary(SharedLibrary library)
      : NcclApiLibrary(std::move(library), "NCCL") {}
};

}  // namespace hetccl
