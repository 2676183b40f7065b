// HetCCL's own extensions (hetccl.h).
#include <cstdio>
#include <string>

#include "api/api_call.h"
#include "core/comm_registry.h"
#include "runtime/host/host_runtime.h"

using hetccl::apiCall;

HETCCL_EXPORT ncclResult_t hetcclStreamCreate(cudaStream_t* stream) {
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(stream != nullptr, "stream is NULL");
    *stream = hetccl::hostRuntimeImpl().createStream();
    return ncclSuccess;
  });
}

HETCCL_EXPORT ncclResult_t hetcclStreamDestroy(cudaStream_t stream) {
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(stream != nullptr, "stream is NULL");
    hetccl::hostRuntimeImpl().destroyStream(stream);
    return ncclSuccess;
  });
}

HETCCL_EXPORT ncclResult_t hetcclStreamSynchronize(cudaStream_t stream) {
  return apiCall(__func__, [&] {
    hetccl::hostRuntimeImpl().synchronize(stream);
    return ncclSuccess;
  });
}

HETCCL_EXPORT ncclResult_t hetcclStreamQuery(cudaStream_t stream) {
  return apiCall(__func__, [&] {
    if (!hetccl::hostRuntimeImpl().idle(stream)) return ncclInProgress;
    hetccl::hostRuntimeImpl().synchronize(stream);  // reports a failure
    return ncclSuccess;
  });
}

HETCCL_EXPORT ncclResult_t hetcclCommRuntime(ncclComm_t comm,
                                             hetcclRuntimeKind_t* kind) {
  return apiCall(__func__, [&] {
    auto target = hetccl::CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(kind != nullptr, "kind is NULL");
    // An emulated GPU's buffers and streams are the host's.
    auto gpu = target->gpu();
    *kind = static_cast<hetcclRuntimeKind_t>(gpu && gpu->emulated
                                                 ? hetccl::RuntimeKind::Host
                                                 : target->runtimeKind());
    return ncclSuccess;
  });
}

HETCCL_EXPORT ncclResult_t hetcclCommDomains(ncclComm_t comm, int* ndomains,
                                             int* domain) {
  return apiCall(__func__, [&] {
    auto target = hetccl::CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(ndomains != nullptr && domain != nullptr,
                     "ndomains or domain is NULL");
    *ndomains = target->domainCount();
    *domain = target->domainIndex();
    return ncclSuccess;
  });
}

HETCCL_EXPORT ncclResult_t hetcclCommCrossDomainBytes(ncclComm_t comm,
                                                      size_t* sent,
                                                      size_t* received) {
  return apiCall(__func__, [&] {
    auto target = hetccl::CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(sent != nullptr && received != nullptr,
                     "sent or received is NULL");
    *sent = target->crossDomainBytesSent();
    *received = target->crossDomainBytesReceived();
    return ncclSuccess;
  });
}

namespace {

// Writes `text` as hetcclCommTopology and the extensions after it promise.
ncclResult_t copyText(const std::string& text, char* out, size_t size,
                      size_t* needed) {
  HETCCL_CHECK_ARG(needed != nullptr, "needed is NULL");
  HETCCL_CHECK_ARG(out != nullptr || size == 0, "text is NULL, size %zu", size);
  *needed = text.size() + 1;
  if (size > 0) std::snprintf(out, size, "%s", text.c_str());
  return ncclSuccess;
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines)
    text += (text.empty() ? "" : "\n") + line;
  return text;
}

}  // namespace

HETCCL_EXPORT ncclResult_t hetcclCommTopology(ncclComm_t comm, char* text,
                                              size_t size, size_t* needed) {
  return apiCall(__func__, [&] {
    auto target = hetccl::CommRegistry::instance().find(comm);
    target->checkUsable();
    return copyText(joinLines(target->topology()), text, size, needed);
  });
}

HETCCL_EXPORT ncclResult_t hetcclCommDomainLibrary(ncclComm_t comm, char* text,
                                                   size_t size,
                                                   size_t* needed) {
  return apiCall(__func__, [&] {
    auto target = hetccl::CommRegistry::instance().find(comm);
    target->checkUsable();
    return copyText(target->domainLibrary(), text, size, needed);
  });
}

HETCCL_EXPORT ncclResult_t hetcclCommGpuBuffers(ncclComm_t comm, char* text,
                                                size_t size, size_t* needed) {
  return apiCall(__func__, [&] {
    auto target = hetccl::CommRegistry::instance().find(comm);
    target->checkUsable();
    return copyText(joinLines(target->gpuBuffers()), text, size, needed);
  });
}
