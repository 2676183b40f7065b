#include "vendor/nccl/nccl_comm.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/cuda_probe.h"
#include "util/error.h"
#include "vendor/op_traits.h"
#include "util/log.h"

namespace hetccl {
namespace {

// NCCL's own op for a resolved reduction; PreMulSum ops are made per call.
ncclRedOp_t builtinOp(const ReduceSpec& spec) {
  return spec.average ? ncclAvg : spec.base;
}

template <typename Function>
void requireFunction(const NcclApiLibrary& library, Function function,
                     const char* name) {
  if (function == nullptr)
    fail(ncclInvalidUsage, "the %s library loaded has no %s", library.vendor(),
         name);
}

// The process-wide libraries ncclCalling recognises: one NCCL and one RCCL
// at most, each set once and never cleared.
constexpr int kMaxProcessLibraries = 2;
std::atomic<const NcclApiLibrary*> processLibraries[kMaxProcessLibraries];

// Removes an environment variable while it lives. Only around a vendor
// communicator's creation, which the communicator's init serialises.
class ScopedUnsetEnvironment {
 public:
  explicit ScopedUnsetEnvironment(const char* name) : name_(name) {
    if (const char* value = getenv(name)) {
      saved_ = value;
      unsetenv(name);
    }
  }
  ~ScopedUnsetEnvironment() {
    if (saved_) setenv(name_, saved_->c_str(), 1);
  }
  ScopedUnsetEnvironment(const ScopedUnsetEnvironment&) = delete;
  ScopedUnsetEnvironment& operator=(const ScopedUnsetEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

}  // namespace

void recogniseCallsFrom(const NcclApiLibrary& library) {
  for (auto& slot : processLibraries) {
    const NcclApiLibrary* empty = nullptr;
    if (slot.compare_exchange_strong(empty, &library,
                                     std::memory_order_release) ||
        empty == &library)
      return;
  }
  LOG_WARN(kLogInit, "%s at %s is not recognised as a caller", library.vendor(),
           library.path().c_str());
}

const NcclApi* ncclCalling(const void* caller) {
  for (const auto& slot : processLibraries) {
    const NcclApiLibrary* library = slot.load(std::memory_order_acquire);
    if (library == nullptr) return nullptr;  // slots fill in order
    if (library->contains(caller)) return &library->api();
  }
  return nullptr;
}

const NcclLibrary& processNccl() { return processLibrary<NcclLibrary>(); }

NcclComm::NcclComm(Oob& oob, const NcclLibrary& nccl, int device)
    : NcclComm(oob, nccl, device, setCurrentCudaDevice) {}

NcclComm::NcclComm(Oob& oob, const NcclApiLibrary& library, int device,
                   MakeDeviceCurrent makeCurrent)
    : nccl_(library) {
  makeCurrent(device);
  // NCCL_COMM_ID names HetCCL's own root; the library would read it too and
  // put its root on the same address.
  ScopedUnsetEnvironment hideCommId("NCCL_COMM_ID");
  std::vector<ncclUniqueId> ids(oob.nranks());
  if (oob.rank() == 0)
    check(nccl_.api().GetUniqueId(&ids[0]), "ncclGetUniqueId");
  oob.allGather(ids.data(), sizeof(ncclUniqueId));
  // Blocking here even for nonblocking HetCCL communicators: HetCCL's own
  // init already runs in the background then.
  check(nccl_.api().CommInitRank(&comm_, oob.nranks(), ids[0], oob.rank()),
        "ncclCommInitRank");
  LOG_INFO(kLogInit, "rank %d of %d: %s communicator on device %d", oob.rank(),
           oob.nranks(), nccl_.vendor(), device);
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) nccl_.api().CommDestroy(comm_);
}

void NcclComm::finalize() {
  if (nccl_.api().CommFinalize != nullptr)
    check(nccl_.api().CommFinalize(comm_), "ncclCommFinalize");
}

ncclResult_t NcclComm::asyncError() const {
  if (nccl_.api().CommGetAsyncError == nullptr) return ncclSuccess;
  ncclResult_t error = ncclSuccess;
  check(nccl_.api().CommGetAsyncError(comm_, &error), "ncclCommGetAsyncError");
  return error;
}

void* NcclComm::registerBuffer(void* buffer, size_t bytes) {
  requireFunction(nccl_, nccl_.api().CommRegister, "ncclCommRegister");
  void* handle = nullptr;
  check(nccl_.api().CommRegister(comm_, buffer, bytes, &handle),
        "ncclCommRegister");
  return handle;
}

void NcclComm::deregisterBuffer(void* handle) {
  requireFunction(nccl_, nccl_.api().CommDeregister, "ncclCommDeregister");
  check(nccl_.api().CommDeregister(comm_, handle), "ncclCommDeregister");
}

ncclWindow_t NcclComm::registerWindow(void* buffer, size_t bytes, int flags) {
  requireFunction(nccl_, nccl_.api().CommWindowRegister,
                  "ncclCommWindowRegister");
  ncclWindow_t window = nullptr;
  check(nccl_.api().CommWindowRegister(comm_, buffer, bytes, &window, flags),
        "ncclCommWindowRegister");
  return window;
}

void NcclComm::deregisterWindow(ncclWindow_t window) {
  requireFunction(nccl_, nccl_.api().CommWindowDeregister,
                  "ncclCommWindowDeregister");
  check(nccl_.api().CommWindowDeregister(comm_, window),
        "ncclCommWindowDeregister");
}

void NcclComm::createDevComm(const ncclDevCommRequirements* requirements,
                             ncclDevComm* devComm) {
  requireFunction(nccl_, nccl_.api().DevCommCreate, "ncclDevCommCreate");
  check(nccl_.api().DevCommCreate(comm_, requirements, devComm),
        "ncclDevCommCreate");
}

void NcclComm::destroyDevComm(const ncclDevComm* devComm) {
  requireFunction(nccl_, nccl_.api().DevCommDestroy, "ncclDevCommDestroy");
  check(nccl_.api().DevCommDestroy(comm_, devComm), "ncclDevCommDestroy");
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
  fail(result, "%s failed in %s (%s)%s%s", call, nccl_.vendor(),
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
    requireFunction(nccl_, api.RedOpCreatePreMulSum,
                    "ncclRedOpCreatePreMulSum");
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
      requireFunction(nccl_, api.AlltoAll, "ncclAlltoAll");
      result = api.AlltoAll(op.sendbuff, op.recvbuff, op.count, op.dtype, comm_,
                            stream);
      break;
    case OpKind::Gather:
      requireFunction(nccl_, api.Gather, "ncclGather");
      result = api.Gather(op.sendbuff, op.recvbuff, op.count, op.dtype, op.root,
                          comm_, stream);
      break;
    case OpKind::Scatter:
      requireFunction(nccl_, api.Scatter, "ncclScatter");
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
