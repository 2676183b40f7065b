#include "vendor/nccl/nccl_comm.h"

#include <atomic>
#include <mutex>

#include "runtime/cuda_probe.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// NCCL's own op for a resolved reduction; PreMulSum ops are made per call.
ncclRedOp_t builtinOp(const ReduceSpec& spec) {
  return spec.average ? ncclAvg : spec.base;
}

template <typename Function>
void requireFunction(Function function, const char* name) {
  if (function == nullptr)
    fail(ncclInvalidUsage, "the NCCL library loaded has no %s", name);
}

}  // namespace

namespace {

std::atomic<const NcclLibrary*> loadedNccl{nullptr};

}  // namespace

const NcclLibrary& processNccl() {
  static std::once_flag once;
  static std::unique_ptr<NcclLibrary> library;
  std::call_once(once, [] {
    library = NcclLibrary::load();
    loadedNccl.store(library.get(), std::memory_order_release);
  });
  return *library;
}

const NcclApi* ncclCalling(const void* caller) {
  const NcclLibrary* nccl = loadedNccl.load(std::memory_order_acquire);
  return nccl != nullptr && nccl->contains(caller) ? &nccl->api() : nullptr;
}

NcclComm::NcclComm(Oob& oob, const NcclLibrary& nccl, int device)
    : nccl_(nccl) {
  setCurrentCudaDevice(device);
  std::vector<ncclUniqueId> ids(oob.nranks());
  if (oob.rank() == 0)
    check(nccl_.api().GetUniqueId(&ids[0]), "ncclGetUniqueId");
  oob.allGather(ids.data(), sizeof(ncclUniqueId));
  // Blocking here even for nonblocking HetCCL communicators: HetCCL's own
  // init already runs in the background then.
  check(nccl_.api().CommInitRank(&comm_, oob.nranks(), ids[0], oob.rank()),
        "ncclCommInitRank");
  LOG_INFO(kLogInit, "rank %d of %d: NCCL communicator on device %d",
           oob.rank(), oob.nranks(), device);
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) nccl_.api().CommDestroy(comm_);
}

void NcclComm::abort() {
  if (comm_ != nullptr) nccl_.api().CommAbort(comm_);
  comm_ = nullptr;
}

int NcclComm::device() const {
  int device = -1;
  check(nccl_.api().CommCuDevice(comm_, &device), "ncclCommCuDevice");
  return device;
}

void NcclComm::check(ncclResult_t result, const char* call) const {
  if (result == ncclSuccess || result == ncclInProgress) return;
  const char* detail = nccl_.api().GetLastError != nullptr
                           ? nccl_.api().GetLastError(comm_)
                           : nccl_.api().GetErrorString(result);
  fail(result, "%s failed in NCCL (%s)%s%s", call,
       nccl_.api().GetErrorString(result), detail && *detail ? ": " : "",
       detail ? detail : "");
}

void NcclComm::launch(const std::vector<Op>& ops, StreamHandle stream) {
  bool grouped = ops.size() > 1;
  if (grouped) check(nccl_.api().GroupStart(), "ncclGroupStart");
  try {
    for (const Op& op : ops) issue(op, stream);
  } catch (...) {
    if (grouped) nccl_.api().GroupEnd();
    throw;
  }
  if (grouped) check(nccl_.api().GroupEnd(), "ncclGroupEnd");
}

void NcclComm::issue(const Op& op, StreamHandle stream) {
  const NcclApi& api = nccl_.api();
  ncclRedOp_t redOp = builtinOp(op.reduce);
  bool premul = op.reduce.preMultiply;
  if (premul) {
    requireFunction(api.RedOpCreatePreMulSum, "ncclRedOpCreatePreMulSum");
    bool onDevice = op.reduce.scalarPointer != nullptr;
    check(api.RedOpCreatePreMulSum(
              &redOp, const_cast<void*>(op.reduce.scalar()), op.dtype,
              onDevice ? ncclScalarDevice : ncclScalarHostImmediate, comm_),
          "ncclRedOpCreatePreMulSum");
  }
  ncclResult_t result = ncclSuccess;
  const char* call = opKindName(op.kind);
  switch (op.kind) {
    case OpKind::AllReduce:
      result = api.AllReduce(op.sendbuff, op.recvbuff, op.count, op.dtype,
                             redOp, comm_, stream);
      break;
    case OpKind::Reduce:
      result = api.Reduce(op.sendbuff, op.recvbuff, op.count, op.dtype, redOp,
                          op.root, comm_, stream);
      break;
    case OpKind::ReduceScatter:
      result = api.ReduceScatter(op.sendbuff, op.recvbuff, op.count, op.dtype,
                                 redOp, comm_, stream);
      break;
    case OpKind::AllGather:
      result = api.AllGather(op.sendbuff, op.recvbuff, op.count, op.dtype,
                             comm_, stream);
      break;
    case OpKind::Broadcast:
      result = api.Broadcast(op.sendbuff, op.recvbuff, op.count, op.dtype,
                             op.root, comm_, stream);
      break;
    case OpKind::AlltoAll:
      requireFunction(api.AlltoAll, "ncclAlltoAll");
      result = api.AlltoAll(op.sendbuff, op.recvbuff, op.count, op.dtype, comm_,
                            stream);
      break;
    case OpKind::Gather:
      requireFunction(api.Gather, "ncclGather");
      result = api.Gather(op.sendbuff, op.recvbuff, op.count, op.dtype, op.root,
                          comm_, stream);
      break;
    case OpKind::Scatter:
      requireFunction(api.Scatter, "ncclScatter");
      result = api.Scatter(op.sendbuff, op.recvbuff, op.count, op.dtype,
                           op.root, comm_, stream);
      break;
    case OpKind::Send:
      result =
          api.Send(op.sendbuff, op.count, op.dtype, op.root, comm_, stream);
      break;
    case OpKind::Recv:
      result =
          api.Recv(op.recvbuff, op.count, op.dtype, op.root, comm_, stream);
      break;
  }
  if (premul) api.RedOpDestroy(redOp, comm_);  // NCCL allows it once enqueued
  check(result, call);
}

}  // namespace hetccl
