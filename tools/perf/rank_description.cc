#include "perf/rank_description.h"

#include <unistd.h>

#include <cstdio>

namespace hetccl {
namespace perf {
namespace {

void copyText(char* dst, size_t capacity, const std::string& text) {
  std::snprintf(dst, capacity, "%s", text.c_str());
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

// HetCCL's map of the communicator; empty from a library without one.
std::string topologyOf(const NcclApi& nccl, ncclComm_t comm) {
  if (!nccl.commTopology) return "";
  size_t needed = 0;
  nccl.check(nccl.commTopology(comm, nullptr, 0, &needed), "hetcclCommTopology",
             comm);
  std::string map(needed, '\0');
  nccl.check(nccl.commTopology(comm, map.data(), map.size(), &needed),
             "hetcclCommTopology", comm);
  map.resize(needed - 1);
  return map;
}

}  // namespace perf
}  // namespace hetccl
