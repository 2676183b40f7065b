// Memory allocation and registration, and the device-side features that
// need a GPU.
#include "api/api_call.h"
#include "core/comm_registry.h"
#include "runtime/host/host_runtime.h"

using hetccl::apiCall;
using hetccl::CommRegistry;
using hetccl::fail;

HETCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  HETCCL_RETURN_TO_NCCL(MemAlloc, ptr, size);
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(ptr != nullptr, "ptr is NULL");
    *ptr = hetccl::hostRuntimeImpl().allocate(size);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  HETCCL_RETURN_TO_NCCL(MemFree, ptr);
  return apiCall(__func__, [&] {
    if (ptr != nullptr) hetccl::hostRuntimeImpl().release(ptr);
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
    *handle = target->registrations().add(buff, size);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm,
           void* handle) {
  HETCCL_RETURN_TO_NCCL(CommDeregister, comm, handle);
  return apiCall(__func__, [&] {
    CommRegistry::instance().find(comm)->registrations().remove(handle);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff,
           size_t size, ncclWindow_t* win, int winFlags) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(win != nullptr, "win is NULL");
    fail(ncclInvalidUsage,
         "rank %d is a CPU rank: symmetric memory windows need GPU memory",
         target->rank());
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm,
           ncclWindow_t win) {
  HETCCL_RETURN_TO_NCCL(CommWindowDeregister, comm, win);
  return apiCall(__func__, [&] {
    CommRegistry::instance().find(comm);
    fail(ncclInvalidArgument,
         "window %p was not registered: CPU ranks have no windows",
         static_cast<void*>(win));
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm,
           const ncclDevCommRequirements* reqs, ncclDevComm* outDevComm) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    fail(ncclInvalidUsage,
         "rank %d is a CPU rank: device communicators need a GPU",
         target->rank());
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm,
           const ncclDevComm* devComm) {
  HETCCL_RETURN_TO_NCCL(DevCommDestroy, comm, devComm);
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    fail(ncclInvalidUsage,
         "rank %d is a CPU rank: it has no device communicators",
         target->rank());
    return ncclSuccess;
  });
}
