// A loaded library that exports the NCCL API (NVIDIA's NCCL, AMD's RCCL,
// which keeps NCCL's names and signatures), reached only through a table of
// function pointers. HetCCL exports the same function names, so such a
// library is opened with RTLD_DEEPBIND (its calls to itself stay inside it)
// and its functions are never reached by name.
#pragma once

#include <cstdint>
#include <string>

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
  // "2.28.9": version() as its release reads.
  std::string versionText() const;

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

}  // namespace hetccl
