#include "domain/nccl_api/nccl_api_comm.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "op/op_traits.h"
#include "util/collective_setup.h"
#include "util/error.h"
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

// Hides NCCL_COMM_ID from the library while any communicator of this
// process is being created: it names HetCCL's own root, and the library
// would read it too and put its root on the same address. Grouped inits
// create communicators on parallel threads, so the variable is removed by
// the first of them and restored by the last, under one lock, rather than
// by each (which would let one thread restore it while another's library
// reads it).
class CommIdHidden {
 public:
  CommIdHidden() {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (state().holders++ > 0) return;
    if (const char* value = getenv(kName)) {
      state().saved = value;
      unsetenv(kName);
    }
  }
  ~CommIdHidden() {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (--state().holders > 0 || !state().saved) return;
    setenv(kName, state().saved->c_str(), 1);
    state().saved.reset();
  }
  CommIdHidden(const CommIdHidden&) = delete;
  CommIdHidden& operator=(const CommIdHidden&) = delete;

 private:
  static constexpr const char* kName = "NCCL_COMM_ID";
  // The environment is process-wide, so is what hides a part of it.
  struct State {
    std::mutex mutex;
    int holders = 0;
    std::optional<std::string> saved;
  };
  static State& state() {
    static State shared;
    return shared;
  }
};

}  // namespace

NcclApiComm::NcclApiComm(Oob& oob, const char* vendor,
                         const LoadLibrary& loadLibrary, int device,
                         MakeDeviceCurrent makeCurrent) {
  CommIdHidden hideCommId;
  std::vector<ncclUniqueId> ids(oob.nranks());
  // Every rank goes as far as it can before anyone waits in the library's
  // own init, then all agree: otherwise the ranks that got on would wait
  // for one that failed until the bootstrap timeout.
  std::optional<Error> failure;
  captureFailure(failure, [&] {
    library_ = &loadLibrary();
    makeCurrent(device);
    if (oob.rank() == 0)
      check(library_->api().GetUniqueId(&ids[0]), "ncclGetUniqueId");
  });
  std::string what = std::string(vendor) + " domain";
  std::string stage =
      std::string("loading ") + vendor + " and preparing its communicator";
  agreeOnSuccess(oob, failure, what.c_str(), stage.c_str());
  oob.allGather(ids.data(), sizeof(ncclUniqueId));
  // Blocking here even for nonblocking HetCCL communicators: HetCCL's own
  // init already runs in the background then.
  ncclComm_t comm = nullptr;
  check(library_->api().CommInitRank(&comm, oob.nranks(), ids[0], oob.rank()),
        "ncclCommInitRank");
  comm_.store(comm);
  LOG_INFO(kLogInit, "rank %d of %d: %s communicator on device %d", oob.rank(),
           oob.nranks(), library_->vendor(), device);
}

NcclApiComm::~NcclApiComm() {
  if (ncclComm_t comm = comm_.exchange(nullptr))
    library_->api().CommDestroy(comm);
}

void NcclApiComm::finalize() {
  if (library_->api().CommFinalize != nullptr)
    check(library_->api().CommFinalize(comm()), "ncclCommFinalize");
}

ncclResult_t NcclApiComm::asyncError() const {
  if (library_->api().CommGetAsyncError == nullptr) return ncclSuccess;
  ncclResult_t error = ncclSuccess;
  check(library_->api().CommGetAsyncError(comm(), &error),
        "ncclCommGetAsyncError");
  return error;
}

void* NcclApiComm::registerBuffer(void* buffer, size_t bytes) {
  requireFunction(*library_, library_->api().CommRegister, "ncclCommRegister");
  void* handle = nullptr;
  check(library_->api().CommRegister(comm(), buffer, bytes, &handle),
        "ncclCommRegister");
  return handle;
}

void NcclApiComm::deregisterBuffer(void* handle) {
  requireFunction(*library_, library_->api().CommDeregister,
                  "ncclCommDeregister");
  check(library_->api().CommDeregister(comm(), handle), "ncclCommDeregister");
}

ncclWindow_t NcclApiComm::registerWindow(void* buffer, size_t bytes,
                                         int flags) {
  requireFunction(*library_, library_->api().CommWindowRegister,
                  "ncclCommWindowRegister");
  ncclWindow_t window = nullptr;
  check(
      library_->api().CommWindowRegister(comm(), buffer, bytes, &window, flags),
      "ncclCommWindowRegister");
  return window;
}

void NcclApiComm::deregisterWindow(ncclWindow_t window) {
  requireFunction(*library_, library_->api().CommWindowDeregister,
                  "ncclCommWindowDeregister");
  check(library_->api().CommWindowDeregister(comm(), window),
        "ncclCommWindowDeregister");
}

void NcclApiComm::createDevComm(const ncclDevCommRequirements* requirements,
                                ncclDevComm* devComm) {
  requireFunction(*library_, library_->api().DevCommCreate,
                  "ncclDevCommCreate");
  check(library_->api().DevCommCreate(comm(), requirements, devComm),
        "ncclDevCommCreate");
}

void NcclApiComm::destroyDevComm(const ncclDevComm* devComm) {
  requireFunction(*library_, library_->api().DevCommDestroy,
                  "ncclDevCommDestroy");
  check(library_->api().DevCommDestroy(comm(), devComm), "ncclDevCommDestroy");
}

void NcclApiComm::abort() {
  if (ncclComm_t comm = comm_.exchange(nullptr))
    library_->api().CommAbort(comm);
}

int NcclApiComm::device() const {
  int device = -1;
  check(library_->api().CommCuDevice(comm(), &device), "ncclCommCuDevice");
  return device;
}

void NcclApiComm::check(ncclResult_t result, const char* call) const {
  if (result == ncclSuccess || result == ncclInProgress) return;
  const char* detail = library_->api().GetLastError != nullptr
                           ? library_->api().GetLastError(comm_.load())
                           : library_->api().GetErrorString(result);
  fail(result, "%s failed in %s (%s)%s%s", call, library_->vendor(),
       library_->api().GetErrorString(result), detail && *detail ? ": " : "",
       detail ? detail : "");
}

ncclComm_t NcclApiComm::comm() const {
  ncclComm_t comm = comm_.load();
  if (comm == nullptr)
    fail(ncclInvalidUsage, "the %s communicator was aborted",
         library_->vendor());
  return comm;
}

// The communicator is read once per launch: abort() on another thread may
// take it meanwhile, which the library allows for calls already inside it.
void NcclApiComm::launch(const std::vector<Op>& ops, StreamHandle stream) {
  ncclComm_t comm = this->comm();
  bool grouped = ops.size() > 1;
  if (grouped) check(library_->api().GroupStart(), "ncclGroupStart");
  try {
    for (const Op& op : ops) issue(comm, op, stream);
  } catch (...) {
    if (grouped) library_->api().GroupEnd();
    throw;
  }
  if (grouped) check(library_->api().GroupEnd(), "ncclGroupEnd");
}

void NcclApiComm::groupStart() {
  check(library_->api().GroupStart(), "ncclGroupStart");
}

void NcclApiComm::groupEnd() {
  check(library_->api().GroupEnd(), "ncclGroupEnd");
}

std::string NcclApiComm::describe() const {
  return format("%s %s, %s", library_->vendor(),
                library_->versionText().c_str(), library_->path().c_str());
}

void NcclApiComm::issue(ncclComm_t comm, const Op& op, StreamHandle stream) {
  const NcclApi& api = library_->api();
  ncclRedOp_t redOp = builtinOp(op.reduce);
  bool premul = op.reduce.preMultiply;
  if (premul) {
    requireFunction(*library_, api.RedOpCreatePreMulSum,
                    "ncclRedOpCreatePreMulSum");
    bool onDevice = op.reduce.scalarPointer != nullptr;
    check(api.RedOpCreatePreMulSum(
              &redOp, const_cast<void*>(op.reduce.scalar()), op.dtype,
              onDevice ? ncclScalarDevice : ncclScalarHostImmediate, comm),
          "ncclRedOpCreatePreMulSum");
  }
  ncclResult_t result = ncclSuccess;
  const char* call = opKindName(op.kind);
  switch (op.kind) {
    case OpKind::AllReduce:
      result = api.AllReduce(op.sendbuff, op.recvbuff, op.count, op.dtype,
                             redOp, comm, stream);
      break;
    case OpKind::Reduce:
      result = api.Reduce(op.sendbuff, op.recvbuff, op.count, op.dtype, redOp,
                          op.root, comm, stream);
      break;
    case OpKind::ReduceScatter:
      // The vendor libraries read adjoining blocks only.
      if (op.blockStride != 0 && op.blockStride != op.count)
        fail(ncclInternalError,
             "a reduce-scatter with input blocks apart reached %s",
             library_->vendor());
      result = api.ReduceScatter(op.sendbuff, op.recvbuff, op.count, op.dtype,
                                 redOp, comm, stream);
      break;
    case OpKind::AllGather:
      result = api.AllGather(op.sendbuff, op.recvbuff, op.count, op.dtype, comm,
                             stream);
      break;
    case OpKind::Broadcast:
      result = api.Broadcast(op.sendbuff, op.recvbuff, op.count, op.dtype,
                             op.root, comm, stream);
      break;
    case OpKind::AlltoAll:
      requireFunction(*library_, api.AlltoAll, "ncclAlltoAll");
      result = api.AlltoAll(op.sendbuff, op.recvbuff, op.count, op.dtype, comm,
                            stream);
      break;
    case OpKind::Gather:
      requireFunction(*library_, api.Gather, "ncclGather");
      result = api.Gather(op.sendbuff, op.recvbuff, op.count, op.dtype, op.root,
                          comm, stream);
      break;
    case OpKind::Scatter:
      requireFunction(*library_, api.Scatter, "ncclScatter");
      result = api.Scatter(op.sendbuff, op.recvbuff, op.count, op.dtype,
                           op.root, comm, stream);
      break;
    case OpKind::Send:
      result = api.Send(op.sendbuff, op.count, op.dtype, op.root, comm, stream);
      break;
    case OpKind::Recv:
      result = api.Recv(op.recvbuff, op.count, op.dtype, op.root, comm, stream);
      break;
  }
  if (premul) api.RedOpDestroy(redOp, comm);  // NCCL allows it once enqueued
  check(result, call);
}

}  // namespace hetccl
