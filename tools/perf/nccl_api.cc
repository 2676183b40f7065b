#include "perf/nccl_api.h"

#include <dlfcn.h>

#include "perf/perf_error.h"

namespace hetccl {
namespace perf {
namespace {

// Resolves the functions of a loaded library from its handle only: with
// RTLD_DEFAULT the names would find the linked HetCCL's exports instead.
class SymbolResolver {
 public:
  SymbolResolver(void* handle, const std::string& path)
      : handle_(handle), path_(path) {}

  template <typename Function>
  void require(const char* name, Function* function) const {
    if (!optional(name, function)) {
      perfFail(
          "--nccl-library %s does not export %s: is it an NCCL-API library "
          "(NVIDIA NCCL, RCCL or HetCCL)?",
          path_.c_str(), name);
    }
  }

  template <typename Function>
  bool optional(const char* name, Function* function) const {
    *function = reinterpret_cast<Function>(dlsym(handle_, name));
    return *function != nullptr;
  }

 private:
  void* handle_;
  const std::string& path_;
};

void resolveCoreApi(const SymbolResolver& symbols, NcclApi* api) {
  symbols.require("ncclGetVersion", &api->getVersion);
  symbols.require("ncclGetUniqueId", &api->getUniqueId);
  symbols.require("ncclCommInitRank", &api->commInitRank);
  symbols.require("ncclCommDestroy", &api->commDestroy);
  symbols.require("ncclCommAbort", &api->commAbort);
  symbols.require("ncclCommGetAsyncError", &api->commGetAsyncError);
  symbols.require("ncclGetErrorString", &api->getErrorString);
  symbols.require("ncclGetLastError", &api->getLastError);
  symbols.require("ncclGroupStart", &api->groupStart);
  symbols.require("ncclGroupEnd", &api->groupEnd);
  symbols.require("ncclAllReduce", &api->allReduce);
  symbols.require("ncclAllGather", &api->allGather);
  symbols.require("ncclReduceScatter", &api->reduceScatter);
  symbols.require("ncclBroadcast", &api->broadcast);
  symbols.require("ncclReduce", &api->reduce);
  symbols.require("ncclSend", &api->send);
  symbols.require("ncclRecv", &api->recv);
  symbols.require("ncclRedOpCreatePreMulSum", &api->redOpCreatePreMulSum);
  symbols.require("ncclRedOpDestroy", &api->redOpDestroy);
  symbols.optional("ncclAlltoAll", &api->alltoAll);
  symbols.optional("ncclGather", &api->gather);
  symbols.optional("ncclScatter", &api->scatter);
}

// All of HetCCL's extensions, or none: a library with only some of them is
// not a HetCCL this tool knows how to drive.
void resolveHetcclExtensions(const SymbolResolver& symbols, NcclApi* api) {
  NcclApi found;
  const bool all =
      symbols.optional("hetcclCommRuntime", &found.commRuntime) &&
      symbols.optional("hetcclCommDomains", &found.commDomains) &&
      symbols.optional("hetcclStreamCreate", &found.streamCreate) &&
      symbols.optional("hetcclStreamDestroy", &found.streamDestroy) &&
      symbols.optional("hetcclStreamSynchronize", &found.streamSynchronize);
  if (!all) return;
  api->commRuntime = found.commRuntime;
  api->commDomains = found.commDomains;
  api->streamCreate = found.streamCreate;
  api->streamDestroy = found.streamDestroy;
  api->streamSynchronize = found.streamSynchronize;
  symbols.optional("hetcclCommTopology", &api->commTopology);
  symbols.optional("hetcclCommDomainLibrary", &api->commDomainLibrary);
  symbols.optional("hetcclCommGpuBuffers", &api->commGpuBuffers);
}

NcclApi makeLinkedApi() {
  NcclApi api;
  api.getVersion = &::ncclGetVersion;
  api.getUniqueId = &::ncclGetUniqueId;
  api.commInitRank = &::ncclCommInitRank;
  api.commDestroy = &::ncclCommDestroy;
  api.commAbort = &::ncclCommAbort;
  api.commGetAsyncError = &::ncclCommGetAsyncError;
  api.getErrorString = &::ncclGetErrorString;
  api.getLastError = &::ncclGetLastError;
  api.groupStart = &::ncclGroupStart;
  api.groupEnd = &::ncclGroupEnd;
  api.allReduce = &::ncclAllReduce;
  api.allGather = &::ncclAllGather;
  api.reduceScatter = &::ncclReduceScatter;
  api.broadcast = &::ncclBroadcast;
  api.reduce = &::ncclReduce;
  api.send = &::ncclSend;
  api.recv = &::ncclRecv;
  api.redOpCreatePreMulSum = &::ncclRedOpCreatePreMulSum;
  api.redOpDestroy = &::ncclRedOpDestroy;
  api.alltoAll = &::ncclAlltoAll;
  api.gather = &::ncclGather;
  api.scatter = &::ncclScatter;
  api.commRuntime = &::hetcclCommRuntime;
  api.commDomains = &::hetcclCommDomains;
  api.streamCreate = &::hetcclStreamCreate;
  api.streamDestroy = &::hetcclStreamDestroy;
  api.streamSynchronize = &::hetcclStreamSynchronize;
  api.commTopology = &::hetcclCommTopology;
  api.commDomainLibrary = &::hetcclCommDomainLibrary;
  api.commGpuBuffers = &::hetcclCommGpuBuffers;
  return api;
}

}  // namespace

std::string NcclApi::describe() const {
  return isLinked() ? std::string("the linked HetCCL")
                    : "--nccl-library " + libraryPath;
}

void NcclApi::check(ncclResult_t result, const char* call,
                    ncclComm_t comm) const {
  if (result == ncclSuccess) return;
  const char* detail = getLastError(comm);
  perfFail("%s failed: %s (%d)%s%s", call, getErrorString(result),
           static_cast<int>(result), detail && *detail ? ": " : "",
           detail ? detail : "");
}

const NcclApi& linkedNcclApi() {
  static const NcclApi api = makeLinkedApi();
  return api;
}

NcclApi loadNcclApi(const std::string& path) {
  if (path.empty()) perfFail("--nccl-library needs a path");
  // Never closed: see the header.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!handle) {
    const char* why = dlerror();
    perfFail("--nccl-library %s cannot be loaded: %s", path.c_str(),
             why ? why : "unknown error");
  }
  NcclApi api;
  api.libraryPath = path;
  const SymbolResolver symbols(handle, api.libraryPath);
  resolveCoreApi(symbols, &api);
  resolveHetcclExtensions(symbols, &api);
  return api;
}

}  // namespace perf
}  // namespace hetccl
