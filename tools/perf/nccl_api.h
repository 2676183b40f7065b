// The NCCL API as the tool calls it: a table of function pointers. By
// default the table holds the HetCCL the tool links; with --nccl-library
// PATH it holds the functions of the library at PATH (NVIDIA's NCCL, RCCL,
// another HetCCL build), loaded privately, so that one binary measures
// either. Every nccl* and hetccl* call of the tool goes through this table.
#pragma once

#include <string>

#include "hetccl.h"

namespace hetccl {
namespace perf {

struct NcclApi {
  // "" for the linked HetCCL, else the path the library was loaded from.
  std::string libraryPath;

  // Each has the type of the linked declaration of the same name.
  decltype(&::ncclGetVersion) getVersion = nullptr;
  decltype(&::ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&::ncclCommInitRank) commInitRank = nullptr;
  decltype(&::ncclCommDestroy) commDestroy = nullptr;
  decltype(&::ncclCommAbort) commAbort = nullptr;
  decltype(&::ncclCommGetAsyncError) commGetAsyncError = nullptr;
  decltype(&::ncclGetErrorString) getErrorString = nullptr;
  decltype(&::ncclGetLastError) getLastError = nullptr;
  decltype(&::ncclGroupStart) groupStart = nullptr;
  decltype(&::ncclGroupEnd) groupEnd = nullptr;
  decltype(&::ncclAllReduce) allReduce = nullptr;
  decltype(&::ncclAllGather) allGather = nullptr;
  decltype(&::ncclReduceScatter) reduceScatter = nullptr;
  decltype(&::ncclBroadcast) broadcast = nullptr;
  decltype(&::ncclReduce) reduce = nullptr;
  decltype(&::ncclSend) send = nullptr;
  decltype(&::ncclRecv) recv = nullptr;
  decltype(&::ncclRedOpCreatePreMulSum) redOpCreatePreMulSum = nullptr;
  decltype(&::ncclRedOpDestroy) redOpDestroy = nullptr;
  // Optional: NCCL added ncclAlltoAll, ncclGather and ncclScatter in 2.28.
  // Without them, these run as grouped send/recv, as nccl-tests does.
  decltype(&::ncclAlltoAll) alltoAll = nullptr;
  decltype(&::ncclGather) gather = nullptr;
  decltype(&::ncclScatter) scatter = nullptr;

  // HetCCL's extensions: all set, or all null when the library is not
  // HetCCL (then every rank is a GPU rank and the only domain is all ranks).
  decltype(&::hetcclCommRuntime) commRuntime = nullptr;
  decltype(&::hetcclCommDomains) commDomains = nullptr;
  decltype(&::hetcclStreamCreate) streamCreate = nullptr;
  decltype(&::hetcclStreamDestroy) streamDestroy = nullptr;
  decltype(&::hetcclStreamSynchronize) streamSynchronize = nullptr;
  // Newer than the others: null with a HetCCL that lacks them.
  decltype(&::hetcclCommTopology) commTopology = nullptr;
  decltype(&::hetcclCommDomainLibrary) commDomainLibrary = nullptr;
  decltype(&::hetcclCommGpuBuffers) commGpuBuffers = nullptr;

  bool isLinked() const { return libraryPath.empty(); }
  bool hasHetcclExtensions() const { return commRuntime != nullptr; }
  // "the linked HetCCL" or "--nccl-library PATH", for messages.
  std::string describe() const;
  // Throws PerfError naming the call, the result and getLastError(comm)
  // unless `result` is ncclSuccess.
  void check(ncclResult_t result, const char* call, ncclComm_t comm) const;
};

// The HetCCL this tool is linked with.
const NcclApi& linkedNcclApi();

// Loads the library at `path` with RTLD_LOCAL | RTLD_DEEPBIND (so that its
// calls to its own API stay inside it, even though the linked HetCCL exports
// the same names) and resolves every function from that handle only. The
// library stays loaded for the life of the process: NCCL's threads and
// device state outlive its API calls. Throws PerfError if the library
// cannot be loaded or lacks a required function.
NcclApi loadNcclApi(const std::string& path);

}  // namespace perf
}  // namespace hetccl
