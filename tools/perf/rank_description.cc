#include "perf/rank_description.h"

#include <unistd.h>

#include <cstdio>

namespace hetccl {
namespace perf {
namespace {

void copyText(char* dst, size_t capacity, const std::string& text) {
  std::snprintf(dst, capacity, "%s", text.c_str());
}

// The text an extension of hetcclCommTopology's kind writes; empty from a
// library without it.
std::string extensionText(const NcclApi& nccl, ncclComm_t comm,
                          decltype(&::hetcclCommTopology) extension,
                          const char* name) {
  if (!extension) return "";
  size_t needed = 0;
  nccl.check(extension(comm, nullptr, 0, &needed), name, comm);
  std::string text(needed, '\0');
  nccl.check(extension(comm, text.data(), text.size(), &needed), name, comm);
  text.resize(needed - 1);
  return text;
}

}  // namespace

RankInfo describeRank(const RankContext& context, hetcclRuntimeKind_t kind) {
  RankInfo info{};
  info.rank = context.rank;
  info.pid = static_cast<int32_t>(getpid());
  info.runtime = kind;
  const NcclApi& nccl = *context.nccl;
  info.ndomains = 1;  // a library that is not HetCCL has one domain
  info.domain = 0;
  if (nccl.commDomains) {
    nccl.check(nccl.commDomains(context.comm, &info.ndomains, &info.domain),
               "hetcclCommDomains", context.comm);
  }
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  copyText(info.host, sizeof(info.host), host);
  copyText(info.device, sizeof(info.device), context.device->describe());
  return info;
}

// HetCCL says where it placed the rank; any other library runs it on the
// GPU that was made current.
hetcclRuntimeKind_t rankRuntime(const NcclApi& nccl, ncclComm_t comm,
                                const GpuSelection& gpu) {
  if (nccl.commRuntime) {
    hetcclRuntimeKind_t kind = hetcclRuntimeHost;
    nccl.check(nccl.commRuntime(comm, &kind), "hetcclCommRuntime", comm);
    return kind;
  }
  return gpu.runtime;
}

std::string topologyOf(const NcclApi& nccl, ncclComm_t comm) {
  return extensionText(nccl, comm, nccl.commTopology, "hetcclCommTopology");
}

std::string domainLibraryOf(const NcclApi& nccl, ncclComm_t comm) {
  return extensionText(nccl, comm, nccl.commDomainLibrary,
                       "hetcclCommDomainLibrary");
}

std::string gpuBuffersOf(const NcclApi& nccl, ncclComm_t comm) {
  return extensionText(nccl, comm, nccl.commGpuBuffers, "hetcclCommGpuBuffers");
}

}  // namespace perf
}  // namespace hetccl
