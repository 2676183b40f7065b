#include "domain/nccl_api/nccl_api_library.h"

#include <link.h>

#include <algorithm>

#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

struct SegmentSearch {
  uintptr_t address;  // a function of the library
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

// Finds the loaded object holding `address` and the span of its segments.
int findSegments(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<SegmentSearch*>(data);
  uintptr_t begin = UINTPTR_MAX, end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    begin = std::min(begin, start);
    end = std::max(end, start + segment.p_memsz);
  }
  if (search->address < begin || search->address >= end) return 0;
  search->begin = begin;
  search->end = end;
  return 1;
}

}  // namespace

NcclApiLibrary::NcclApiLibrary(SharedLibrary library, const char* vendor)
    : library_(std::move(library)), vendor_(vendor) {
  std::string missing;
#define HETCCL_NCCL_RESOLVE(name) \
  api_.name =                     \
      reinterpret_cast<decltype(api_.name)>(library_.find("nccl" #name));
  HETCCL_NCCL_REQUIRED(HETCCL_NCCL_RESOLVE)
  HETCCL_NCCL_OPTIONAL(HETCCL_NCCL_RESOLVE)
#undef HETCCL_NCCL_RESOLVE
#define HETCCL_NCCL_CHECK(name) \
  if (api_.name == nullptr) missing += " nccl" #name;
  HETCCL_NCCL_REQUIRED(HETCCL_NCCL_CHECK)
#undef HETCCL_NCCL_CHECK
  if (!missing.empty())
    fail(ncclSystemError, "%s is not a usable %s: it lacks%s",
         library_.path().c_str(), vendor_, missing.c_str());
  SegmentSearch search{reinterpret_cast<uintptr_t>(api_.GetVersion)};
  dl_iterate_phdr(findSegments, &search);
  begin_ = search.begin;
  end_ = search.end;
  ncclResult_t result = api_.GetVersion(&version_);
  if (result != ncclSuccess)
    fail(ncclSystemError, "%s: ncclGetVersion failed (%d)",
         library_.path().c_str(), static_cast<int>(result));
  LOG_INFO(kLogInit, "loaded %s %d from %s", vendor_, version_,
           library_.path().c_str());
}

// NCCL_VERSION's code: X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z
// since 2.9.
std::string NcclApiLibrary::versionText() const {
  const int major = version_ >= 10000 ? version_ / 10000 : version_ / 1000;
  const int minor =
      version_ >= 10000 ? version_ % 10000 / 100 : version_ % 1000 / 100;
  return format("%d.%d.%d", major, minor, version_ % 100);
}

}  // namespace hetccl
