// Collectives and point-to-point operations: argument checks, then the op
// joins the thread's group or is launched on the caller's stream.
#include <cstdint>

#include "api/api_call.h"
#include "core/comm_registry.h"
#include "core/group.h"
#include "util/dtype.h"

using hetccl::apiCall;
using hetccl::Op;
using hetccl::OpKind;

namespace {

enum Buffers : unsigned {
  kNeedsSend = 1u << 0,      // sendbuff is read on every rank
  kNeedsRecv = 1u << 1,      // recvbuff is written on every rank
  kSendAtRoot = 1u << 2,     // sendbuff is read on the root only
  kRecvAtRoot = 1u << 3,     // recvbuff is written on the root only
  kScaledByRanks = 1u << 4,  // a buffer holds count * nranks elements
};

// What NCCL documents about each operation's arguments.
struct Shape {
  unsigned buffers;
  bool rooted;  // `root` is a root (collectives) or a peer (send/recv)
};

Shape shapeOf(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return {kNeedsSend | kNeedsRecv, false};
    case OpKind::Reduce:
      return {kNeedsSend | kRecvAtRoot, true};
    case OpKind::ReduceScatter:
    case OpKind::AllGather:
    case OpKind::AlltoAll:
      return {kNeedsSend | kNeedsRecv | kScaledByRanks, false};
    case OpKind::Broadcast:
      return {kSendAtRoot | kNeedsRecv, true};
    case OpKind::Gather:
      return {kNeedsSend | kRecvAtRoot | kScaledByRanks, true};
    case OpKind::Scatter:
      return {kSendAtRoot | kNeedsRecv | kScaledByRanks, true};
    case OpKind::Send:
      return {kNeedsSend, true};
    case OpKind::Recv:
      return {kNeedsRecv, true};
  }
  return {0, false};
}

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

void checkBuffers(const Op& op, unsigned buffers,
                  const hetccl::Communicator& comm) {
  if (op.count == 0) return;
  bool isRoot = comm.rank() == op.root;
  bool needSend = (buffers & kNeedsSend) || ((buffers & kSendAtRoot) && isRoot);
  bool needRecv = (buffers & kNeedsRecv) || ((buffers & kRecvAtRoot) && isRoot);
  HETCCL_CHECK_ARG(!needSend || op.sendbuff != nullptr,
                   "sendbuff is NULL with count %zu", op.count);
  HETCCL_CHECK_ARG(!needRecv || op.recvbuff != nullptr,
                   "recvbuff is NULL with count %zu", op.count);
  size_t factor = hetccl::dtypeSize(op.dtype) *
                  ((buffers & kScaledByRanks) ? comm.nranks() : 1);
  HETCCL_CHECK_ARG(op.count <= SIZE_MAX / factor,
                   "count %zu overflows the size of the buffers", op.count);
}

ncclResult_t submit(const char* function, ncclComm_t handle,
                    cudaStream_t stream, const Request& request) {
  return apiCall(function, [&] {
    auto comm = hetccl::CommRegistry::instance().find(handle);
    comm->checkUsable();
    Shape shape = shapeOf(request.kind);
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
    if (shape.rooted)
      HETCCL_CHECK_ARG(
          op.root >= 0 && op.root < comm->nranks(),
          "%s %d is out of range [0, %d)",
          op.kind == OpKind::Send || op.kind == OpKind::Recv ? "peer" : "root",
          op.root, comm->nranks());
    checkBuffers(op, shape.buffers, *comm);
    comm->checkStream(stream);
    if (hetccl::Group::current().active())
      hetccl::Group::current().addOp(std::move(comm), op, stream);
    else
      comm->launch({op}, stream);
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
