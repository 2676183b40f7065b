// Group calls and reduction-op creation.
#include "api/api_call.h"
#include "core/comm_registry.h"
#include "core/group.h"
#include "util/dtype.h"

using hetccl::apiCall;
using hetccl::Group;

HETCCL_API(ncclResult_t, ncclGroupStart) {
  return apiCall(__func__, [] {
    Group::current().start();
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclGroupEnd) {
  return apiCall(__func__, [] {
    Group::current().end();
    return ncclSuccess;
  });
}

// Closes the group without running it and estimates its time with a
// simple model of the shared-memory path: a fixed cost per operation plus
// its bytes at memory-copy speed. The estimate is coarse by design.
HETCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(simInfo != nullptr, "simInfo is NULL");
    HETCCL_CHECK_ARG(simInfo->magic == NCCL_SIM_INFO_MAGIC,
                     "simInfo is not an ncclSimInfo_t (magic 0x%x): "
                     "initialise it with NCCL_SIM_INFO_INITIALIZER",
                     simInfo->magic);
    constexpr double kSecondsPerOp = 5e-6;
    constexpr double kBytesPerSecond = 4e9;
    size_t ops = 0;
    size_t bytes = Group::current().discard(&ops);
    simInfo->estimatedTime = static_cast<float>(
        ops * kSecondsPerOp + static_cast<double>(bytes) / kBytesPerSecond);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op,
           void* scalar, ncclDataType_t datatype,
           ncclScalarResidence_t residence, ncclComm_t comm) {
  return apiCall(__func__, [&] {
    auto target = hetccl::CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(op != nullptr, "op is NULL");
    *op = target->userOps().createPreMulSum(
        scalar, hetccl::checkedDtype(datatype), hetccl::enumValue(residence));
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  return apiCall(__func__, [&] {
    hetccl::CommRegistry::instance().find(comm)->userOps().destroy(
        hetccl::enumValue(op));
    return ncclSuccess;
  });
}
