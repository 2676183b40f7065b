// Collectives and point-to-point operations: argument checks, then the op
// joins the thread's group or is launched on the caller's stream.
#include <cstdint>
#include <functional>

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

struct Call {
  Op op;
  unsigned buffers;
  bool reduces;
  bool rooted;          // op.root is a root (collectives) or a peer (send/recv)
  int redOp = ncclSum;  // as passed: checked before it is used as an enum
};

void checkBuffers(const Call& call, const hetccl::Communicator& comm) {
  const Op& op = call.op;
  if (op.count == 0) return;
  bool isRoot = comm.rank() == op.root;
  bool needSend =
      (call.buffers & kNeedsSend) || ((call.buffers & kSendAtRoot) && isRoot);
  bool needRecv =
      (call.buffers & kNeedsRecv) || ((call.buffers & kRecvAtRoot) && isRoot);
  HETCCL_CHECK_ARG(!needSend || op.sendbuff != nullptr,
                   "sendbuff is NULL with count %zu", op.count);
  HETCCL_CHECK_ARG(!needRecv || op.recvbuff != nullptr,
                   "recvbuff is NULL with count %zu", op.count);
  size_t factor = hetccl::dtypeSize(op.dtype) *
                  ((call.buffers & kScaledByRanks) ? comm.nranks() : 1);
  HETCCL_CHECK_ARG(op.count <= SIZE_MAX / factor,
                   "count %zu overflows the size of the buffers", op.count);
}

ncclResult_t submit(const char* function, ncclComm_t handle,
                    const std::function<Call()>& makeCall,
                    cudaStream_t stream) {
  return apiCall(function, [&] {
    Call call = makeCall();
    auto comm = hetccl::CommRegistry::instance().find(handle);
    comm->checkUsable();
    Op& op = call.op;
    if (call.reduces) op.reduce = comm->userOps().resolve(call.redOp, op.dtype);
    if (call.rooted)
      HETCCL_CHECK_ARG(
          op.root >= 0 && op.root < comm->nranks(),
          "%s %d is out of range [0, %d)",
          op.kind == OpKind::Send || op.kind == OpKind::Recv ? "peer" : "root",
          op.root, comm->nranks());
    checkBuffers(call, *comm);
    comm->checkStream(stream);
    if (hetccl::Group::current().active())
      hetccl::Group::current().addOp(std::move(comm), op, stream);
    else
      comm->launch({op}, stream);
    return ncclSuccess;
  });
}

Op makeOp(OpKind kind, const void* sendbuff, void* recvbuff, size_t count,
          const ncclDataType_t& dtype, int root = 0) {
  Op op;
  op.kind = kind;
  op.sendbuff = sendbuff;
  op.recvbuff = recvbuff;
  op.count = count;
  op.dtype = hetccl::checkedDtype(dtype);
  op.root = root;
  return op;
}

}  // namespace

HETCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, ncclRedOp_t op,
           ncclComm_t comm, cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::AllReduce, sendbuff, recvbuff, count, datatype),
            kNeedsSend | kNeedsRecv, true, false, hetccl::enumValue(op)};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root,
           ncclComm_t comm, cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::Reduce, sendbuff, recvbuff, count, datatype, root),
            kNeedsSend | kRecvAtRoot, true, true, hetccl::enumValue(op)};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff,
           void* recvbuff, size_t recvcount, ncclDataType_t datatype,
           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{makeOp(OpKind::ReduceScatter, sendbuff, recvbuff, recvcount,
                           datatype),
                    kNeedsSend | kNeedsRecv | kScaledByRanks, true, false,
                    hetccl::enumValue(op)};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff,
           size_t sendcount, ncclDataType_t datatype, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::AllGather, sendbuff, recvbuff, sendcount, datatype),
            kNeedsSend | kNeedsRecv | kScaledByRanks, false, false};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{makeOp(OpKind::Broadcast, sendbuff, recvbuff, count,
                           datatype, root),
                    kSendAtRoot | kNeedsRecv, false, true};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count,
           ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::Broadcast, buff, buff, count, datatype, root),
            kSendAtRoot | kNeedsRecv, false, true};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::AlltoAll, sendbuff, recvbuff, count, datatype),
            kNeedsSend | kNeedsRecv | kScaledByRanks, false, false};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::Gather, sendbuff, recvbuff, count, datatype, root),
            kNeedsSend | kRecvAtRoot | kScaledByRanks, false, true};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff,
           size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::Scatter, sendbuff, recvbuff, count, datatype, root),
            kSendAtRoot | kNeedsRecv | kScaledByRanks, false, true};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count,
           ncclDataType_t datatype, int peer, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::Send, sendbuff, nullptr, count, datatype, peer),
            kNeedsSend, false, true};
      },
      stream);
}

HETCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count,
           ncclDataType_t datatype, int peer, ncclComm_t comm,
           cudaStream_t stream) {
  return submit(
      __func__, comm,
      [&] {
        return Call{
            makeOp(OpKind::Recv, nullptr, recvbuff, count, datatype, peer),
            kNeedsRecv, false, true};
      },
      stream);
}
