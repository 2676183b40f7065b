// Memory allocation and registration, and the device-side features that
// need a GPU.
#include "api/api_call.h"
#include "core/comm_registry.h"
#include "core/communicator.h"
#include "domain/nccl_api/nccl_api_backend.h"
#include "runtime/gpu_device.h"
#include "runtime/host/host_runtime.h"

using hetccl::apiCall;
using hetccl::CommRegistry;
using hetccl::fail;

namespace {

// The vendor library of the GPU current on this thread, or null on a CPU
// rank: ncclMemAlloc has no communicator to ask.
const hetccl::NcclApiLibrary* currentGpuLibrary() {
  auto gpu = hetccl::currentGpuDevice();
  if (!gpu) return nullptr;
  const auto* backend = hetccl::ncclApiBackendFor(gpu->domainRuntime());
  return backend ? &backend->library() : nullptr;
}

void checkLibraryResult(const hetccl::NcclApiLibrary& library,
                        ncclResult_t result, const char* call) {
  if (result != ncclSuccess)
    fail(result, "%s of %s failed", call, library.vendor());
}

}  // namespace

HETCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  HETCCL_RETURN_TO_NCCL(MemAlloc, ptr, size);
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(ptr != nullptr, "ptr is NULL");
    if (const auto* library = currentGpuLibrary()) {
      if (library->api().MemAlloc == nullptr)
        fail(ncclInvalidUsage, "the %s loaded has no ncclMemAlloc",
             library->vendor());
      checkLibraryResult(*library, library->api().MemAlloc(ptr, size),
                         "ncclMemAlloc");
      return ncclSuccess;
    }
    *ptr = hetccl::hostRuntimeImpl().allocate(size);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  HETCCL_RETURN_TO_NCCL(MemFree, ptr);
  return apiCall(__func__, [&] {
    if (ptr == nullptr) return ncclSuccess;
    const auto* library =
        hetccl::hostRuntimeImpl().owns(ptr) ? nullptr : currentGpuLibrary();
    if (library != nullptr && library->api().MemFree != nullptr) {
      checkLibraryResult(*library, library->api().MemFree(ptr), "ncclMemFree");
      return ncclSuccess;
    }
    hetccl::hostRuntimeImpl().release(ptr);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff,
           size_t size, void** handle) {
  HETCCL_RETURN_TO_NCCL(CommRegister, comm, buff, size, handle);
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(handle != nullptr, "handle is NULL");
    HETCCL_CHECK_ARG(buff != nullptr || size == 0, "buff is NULL");
    if (auto* library = target->libraryFeatures()) {
      *handle = library->registerBuffer(buff, size);
      return ncclSuccess;
    }
    *handle = target->registrations().add(buff, size);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm,
           void* handle) {
  HETCCL_RETURN_TO_NCCL(CommDeregister, comm, handle);
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    if (auto* library = target->libraryFeatures())
      library->deregisterBuffer(handle);
    else
      target->registrations().remove(handle);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff,
           size_t size, ncclWindow_t* win, int winFlags) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(win != nullptr, "win is NULL");
    if (auto* library = target->libraryFeatures()) {
      *win = library->registerWindow(buff, size, winFlags);
      return ncclSuccess;
    }
    fail(ncclInvalidUsage,
         "rank %d: symmetric memory windows need a communicator of GPUs of "
         "one vendor (this one is %s)",
         target->rank(),
         target->domainCount() > 1 ? "heterogeneous" : "of CPU ranks");
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm,
           ncclWindow_t win) {
  HETCCL_RETURN_TO_NCCL(CommWindowDeregister, comm, win);
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    if (auto* library = target->libraryFeatures()) {
      library->deregisterWindow(win);
      return ncclSuccess;
    }
    fail(ncclInvalidArgument,
         "window %p was not registered: this communicator has no windows",
         static_cast<void*>(win));
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm,
           const ncclDevCommRequirements* reqs, ncclDevComm* outDevComm) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    if (auto* library = target->libraryFeatures()) {
      library->createDevComm(reqs, outDevComm);
      return ncclSuccess;
    }
    fail(ncclInvalidUsage,
         "rank %d: device communicators need a communicator of GPUs of one "
         "vendor",
         target->rank());
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm,
           const ncclDevComm* devComm) {
  HETCCL_RETURN_TO_NCCL(DevCommDestroy, comm, devComm);
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    if (auto* library = target->libraryFeatures()) {
      library->destroyDevComm(devComm);
      return ncclSuccess;
    }
    fail(ncclInvalidUsage,
         "rank %d: this communicator has no device "
         "communicators",
         target->rank());
    return ncclSuccess;
  });
}
