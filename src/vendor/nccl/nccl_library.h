// The real NCCL, loaded so that HetCCL can hand NVIDIA domains to it (and
// the function table that AMD's RCCL, which exports the same API, shares).
// HetCCL exports the same function names, so the real library is opened
// with RTLD_DEEPBIND (its calls to itself stay inside it) and its
// functions are only ever reached through this table, never by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nccl.h"
#include "util/shared_library.h"

namespace hetccl {

// clang-format off (it reflows these lists differently on every run)
// Functions every NCCL 2.x has; loading fails without them.
#define HETCCL_NCCL_REQUIRED(X) \
  X(GetVersion)                 \
  X(GetUniqueId)                \
  X(CommInitRank)               \
  X(CommDestroy)                \
  X(CommAbort)                  \
  X(CommCount)                  \
  X(CommUserRank)               \
  X(CommCuDevice)               \
  X(GetErrorString)             \
  X(AllReduce)                  \
  X(Broadcast)                  \
  X(Reduce)                     \
  X(AllGather)                  \
  X(ReduceScatter)              \
  X(Send)                       \
  X(Recv)                       \
  X(GroupStart)                 \
  X(GroupEnd)

// Functions of newer versions; null where the library predates them.
#define HETCCL_NCCL_OPTIONAL(X) \
  X(CommInitRankConfig)         \
  X(CommFinalize)               \
  X(CommSplit)                  \
  X(CommShrink)                 \
  X(CommGetAsyncError)          \
  X(GetLastError)               \
  X(CommRegister)               \
  X(CommDeregister)             \
  X(CommWindowRegister)         \
  X(CommWindowDeregister)       \
  X(MemAlloc)                   \
  X(MemFree)                    \
  X(RedOpCreatePreMulSum)       \
  X(RedOpDestroy)               \
  X(AlltoAll)                   \
  X(Gather)                     \
  X(Scatter)                    \
  X(DevCommCreate)              \
  X(DevCommDestroy)
// clang-format on

// Pointers typed after HetCCL's own declarations, which match NCCL's.
struct NcclApi {
#define HETCCL_NCCL_POINTER(name) decltype(&::nccl##name) name = nullptr;
  HETCCL_NCCL_REQUIRED(HETCCL_NCCL_POINTER)
  HETCCL_NCCL_OPTIONAL(HETCCL_NCCL_POINTER)
#undef HETCCL_NCCL_POINTER
};

// A loaded library that exports the NCCL API: NVIDIA's NCCL, or AMD's
// RCCL, which keeps NCCL's names and signatures. Both vendors' adaptors use
// the one function table.
class NcclApiLibrary {
 public:
  virtual ~NcclApiLibrary() = default;
  NcclApiLibrary(const NcclApiLibrary&) = delete;
  NcclApiLibrary& operator=(const NcclApiLibrary&) = delete;

  const NcclApi& api() const { return api_; }
  // Whether `address` lies in the library's code.
  bool contains(const void* address) const {
    auto at = reinterpret_cast<uintptr_t>(address);
    return at >= begin_ && at < end_;
  }
  const std::string& path() const { return library_.path(); }
  // ncclGetVersion's code (RCCL numbers its versions as NCCL does).
  int version() const { return version_; }
  // "NCCL" or "RCCL", for messages.
  const char* vendor() const { return vendor_; }

 protected:
  // Resolves the table; throws ncclSystemError when a required function
  // is missing or ncclGetVersion fails.
  NcclApiLibrary(SharedLibrary library, const char* vendor);

 private:
  SharedLibrary library_;
  const char* vendor_;
  NcclApi api_;
  int version_ = 0;
  uintptr_t begin_ = 0;  // the span of the library's loaded segments
  uintptr_t end_ = 0;
};

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
