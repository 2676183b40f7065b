// What the tests on the stand-in NCCL share: two ranks of one process,
// made by ncclCommInitAll (device 0 and 1 of the stand-in CUDA runtime),
// and the skip for sanitizer builds.
#pragma once

#include <vector>

#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "nccl.h"

// HetCCL opens vendor libraries with RTLD_DEEPBIND, which
// AddressSanitizer refuses.
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() \
  GTEST_SKIP() << "RTLD_DEEPBIND cannot be used under AddressSanitizer"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

namespace hetccl::mp {

constexpr int kRanks = 2;

struct Ranks {
  std::vector<ncclComm_t> comms = std::vector<ncclComm_t>(kRanks, nullptr);
  Ranks() { MP_CHECK_NCCL(ncclCommInitAll(comms.data(), kRanks, nullptr)); }
  ~Ranks() {
    for (ncclComm_t comm : comms) Comm(comm).destroy();
  }
};

}  // namespace hetccl::mp
