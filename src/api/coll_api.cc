// Collectives and point-to-point operations: argument checks, then the op
// joins the thread's group or is launched on the caller's stream.
#include <cstdint>

#include "api/api_call.h"
#include "core/comm_registry.h"
#include "core/group.h"
#include "op/op_traits.h"
#include "util/dtype.h"
#include "util/log.h"

using hetccl::apiCall;
using hetccl::Op;
using hetccl::OpKind;

namespace {

// One call's arguments as the caller passed them. The data type and the
// reduction op are read through their bytes (enumValue) before use.
struct Request {
  OpKind kind;
  const void* sendbuff;
  void* recvbuff;
  size_t count;
  const ncclDataType_t* dtype;
  const ncclRedOp_t* redOp = nullptr;  // only for reductions
  int root = 0;
};

// The buffers this rank touches must exist, and their byte sizes must fit
// in a size_t.
void checkBuffers(const Op& op, const hetccl::Communicator& comm) {
  if (op.count == 0) return;
  const hetccl::OpTraits& traits = hetccl::opTraits(op.kind);
  auto send = hetccl::sendSpan(op, comm.rank(), comm.nranks());
  auto recv = hetccl::recvSpan(op, comm.rank(), comm.nranks());
  HETCCL_CHECK_ARG(!send.used || send.pointer != nullptr,
                   "sendbuff is NULL with count %zu", op.count);
  HETCCL_CHECK_ARG(!recv.used || recv.pointer != nullptr,
                   "recvbuff is NULL with count %zu", op.count);
  bool scaled = traits.send.scaledByRanks || traits.recv.scaledByRanks;
  size_t factor = hetccl::dtypeSize(op.dtype) *
                  (scaled ? static_cast<size_t>(comm.nranks()) : 1);
  HETCCL_CHECK_ARG(op.count <= SIZE_MAX / factor,
                   "count %zu overflows the size of the buffers", op.count);
}

// NCCL's INFO COLL line for every call: what was asked, on which
// communicator and stream, numbered per communicator, so that a log shows
// the last operation each rank reached.
void logCall(const char* function, const hetccl::Communicator& comm,
             uint64_t opCount, const Op& op, int redOp, cudaStream_t stream) {
  const char* redOpText =
      redOp < 0 ? "none"
                : (redOp < ncclNumOps
                       ? hetccl::redOpName(static_cast<ncclRedOp_t>(redOp))
                       : "user");
  LOG_INFO(hetccl::kLogColl,
           "%s: opCount %llx sendbuff %p recvbuff %p count %zu datatype %s "
           "op %s root %d comm %p [nranks=%d] stream %p",
           function, static_cast<unsigned long long>(opCount), op.sendbuff,
           op.recvbuff, op.count, hetccl::dtypeName(op.dtype), redOpText,
           op.root, static_cast<const void*>(&comm), comm.nranks(),
           static_cast<void*>(stream));
}

// Checks one call and launches it, or adds it to the calling thread's
// group.
void submitOp(const char* function, ncclComm_t handle, cudaStream_t stream,
              const Request& request) {
  auto comm = hetccl::CommRegistry::instance().find(handle);
  comm->checkUsable();
  const hetccl::OpTraits& traits = hetccl::opTraits(request.kind);
  Op op;
  op.kind = request.kind;
  op.sendbuff = request.sendbuff;
  op.recvbuff = request.recvbuff;
  op.count = request.count;
  op.dtype = hetccl::checkedDtype(*request.dtype);
  op.root = request.root;
  if (request.redOp != nullptr)
    op.reduce =
        comm->userOps().resolve(hetccl::enumValue(*request.redOp), op.dtype);
  if (traits.hasRoot || traits.hasPeer)
    HETCCL_CHECK_ARG(op.root >= 0 && op.root < comm->nranks(),
                     "%s %d is out of range [0, %d)",
                     traits.hasPeer ? "peer" : "root", op.root, comm->nranks());
  checkBuffers(op, *comm);
  comm->checkStream(stream);
  comm->numberCall(op);
  logCall(function, *comm, comm->nextOpCount(), op,
          request.redOp ? hetccl::enumValue(*request.redOp) : -1, stream);
  if (hetccl::Group::current().active())
    hetccl::Group::current().addOp(std::move(comm), op, stream);
  else
    comm->launch({op}, stream);
}

ncclResult_t submit(const char* function, ncclComm_t handle,
                    cudaStream_t stream, const Request& request) {
  return apiCall(function, [&] {
    try {
      submitOp(function, handle, stream, request);
    } catch (...) {
      hetccl::Group::current().callFailed(hetccl::currentExceptionAsError());
      throw;
    }
    return ncclSuccess;
  });
}

}  // namespace

HETCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, ncclRedOp_t op,
           ncclComm_t comm, cudaStream_t stream) {
  return submit(__func__, comm, stream,
                {OpKind::AllReduce, sendbuff, recvbuff, count, &datatype, &op});
}

HETCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root,
           ncclComm_t comm, cudaStream_t stream) {
  return submit(
      __func__, comm, stream,
      {OpKind::Reduce, sendbuff, recvbuff, count, &datatype, &op, root});
}

HETCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff,
           void* recvbuff, size_t recvcount, ncclDataType_t datatype,
           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return submit(
      __func__, comm, stream,
      {OpKind::ReduceScatter, sendbuff, recvbuff, recvcount, &datatype, &op});
}

HETCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff,
           size_t sendcount, ncclDataType_t datatype, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(__func__, comm, stream,
                {OpKind::AllGather, sendbuff, recvbuff, sendcount, &datatype});
}

HETCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  HETCCL_RETURN_TO_NCCL(Broadcast, sendbuff, recvbuff, count, datatype, root,
                        comm, stream);
  return submit(
      __func__, comm, stream,
      {OpKind::Broadcast, sendbuff, recvbuff, count, &datatype, nullptr, root});
}

HETCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count,
           ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm, stream,
      {OpKind::Broadcast, buff, buff, count, &datatype, nullptr, root});
}

HETCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(__func__, comm, stream,
                {OpKind::AlltoAll, sendbuff, recvbuff, count, &datatype});
}

HETCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm, stream,
      {OpKind::Gather, sendbuff, recvbuff, count, &datatype, nullptr, root});
}

HETCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm, stream,
      {OpKind::Scatter, sendbuff, recvbuff, count, &datatype, nullptr, root});
}

HETCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count,
           ncclDataType_t datatype, int peer, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm, stream,
      {OpKind::Send, sendbuff, nullptr, count, &datatype, nullptr, peer});
}

HETCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count,
           ncclDataType_t datatype, int peer, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm, stream,
      {OpKind::Recv, nullptr, recvbuff, count, &datatype, nullptr, peer});
}
