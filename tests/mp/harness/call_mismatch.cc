#include "harness/call_mismatch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

// How soon every rank fails. A rank that finds a disagreement tells the
// others before any raises it (core/call_probe.h, in ticks of 20 ms):
// 0.01-0.31 s here, 0.39 s at most under the sanitizer beside 4 busy
// loops. On a machine too loaded to run the probes' threads it waits up
// to 1 s for the others to take it, and they hold it up to 2 s without
// its word; the sanitizer pass of scripts/test.sh once saw three ranks
// fail later than 1 s. So the protocol's bound and a second.
constexpr double kDetectSeconds = 3.0;
constexpr double kAbortSeconds = 5.0;
constexpr size_t kCount = 64;

const char* nameOf(Disagreement what) {
  switch (what) {
    case Disagreement::Count:
      return "Count";
    case Disagreement::Type:
      return "Type";
    case Disagreement::Reduction:
      return "Reduction";
    case Disagreement::Kind:
      return "Kind";
    case Disagreement::Root:
      return "Root";
    case Disagreement::FacingRoots:
      return "FacingRoots";
    case Disagreement::SendRecvCount:
      return "SendRecvCount";
  }
  return "?";
}

enum class Kind { AllReduce, Broadcast, Send, Recv };

// One rank's call, and how the library describes it.
struct Call {
  Kind kind = Kind::AllReduce;
  size_t count = kCount;
  ncclDataType_t dtype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;  // the root, or the peer of a send or receive

  std::string description() const {
    const std::string type = dtype == ncclFloat32 ? "float32" : "int32";
    const std::string size = std::to_string(count) + " x " + type;
    switch (kind) {
      case Kind::AllReduce:
        return "allReduce(" + size + ", " + (op == ncclSum ? "sum" : "max") +
               ")";
      case Kind::Broadcast:
        return "broadcast(" + size + ", root " + std::to_string(root) + ")";
      case Kind::Send:
        return "send(" + size + ", to rank " + std::to_string(root) + ")";
      case Kind::Recv:
        return "recv(" + size + ", from rank " + std::to_string(root) + ")";
    }
    return "";
  }
};

// What rank `rank` of `nranks` calls in the case of `what` disagreement:
// the two halves of the ranks differ. A send or receive goes to the rank
// in the same place of the other half.
Call callOf(Disagreement what, int rank, int nranks) {
  const int half = nranks / 2;
  const bool second = rank >= half;
  const int firstOfOther = second ? 0 : half;
  Call call;
  switch (what) {
    case Disagreement::Count:
      if (second) call.count = kCount / 2;
      break;
    case Disagreement::Type:
      if (second) call.dtype = ncclInt32;
      break;
    case Disagreement::Reduction:
      if (second) call.op = ncclMax;
      break;
    case Disagreement::Kind:
      if (second) call.kind = Kind::Broadcast;
      break;
    case Disagreement::Root:
      call.kind = Kind::Broadcast;
      call.root = second ? half : 0;
      break;
    case Disagreement::FacingRoots:
      call.kind = Kind::Broadcast;
      call.root = firstOfOther;
      break;
    case Disagreement::SendRecvCount:
      call.kind = second ? Kind::Recv : Kind::Send;
      call.root = (rank + half) % nranks;
      if (second) call.count = kCount / 2;
      break;
  }
  return call;
}

ncclResult_t post(const Call& call, std::vector<float>& send,
                  std::vector<float>& recv, ncclComm_t comm,
                  cudaStream_t stream) {
  switch (call.kind) {
    case Kind::AllReduce:
      return ncclAllReduce(send.data(), recv.data(), call.count, call.dtype,
                           call.op, comm, stream);
    case Kind::Broadcast:
      return ncclBroadcast(send.data(), recv.data(), call.count, call.dtype,
                           call.root, comm, stream);
    case Kind::Send:
      return ncclSend(send.data(), call.count, call.dtype, call.root, comm,
                      stream);
    case Kind::Recv:
      return ncclRecv(recv.data(), call.count, call.dtype, call.root, comm,
                      stream);
  }
  return ncclInternalError;
}

// The call's result, else its stream's, else the communicator's async
// error, polled until one is an error or the time is up.
ncclResult_t firstError(ncclResult_t posted, ncclComm_t comm,
                        cudaStream_t stream, double start) {
  ncclResult_t result = posted;
  bool streamDone = false;
  while (result == ncclSuccess && nowSeconds() - start < kDetectSeconds) {
    if (!streamDone) {
      ncclResult_t query = hetcclStreamQuery(stream);
      streamDone = query != ncclInProgress;
      if (streamDone) result = query;
    }
    if (result == ncclSuccess)
      MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &result));
    if (result == ncclSuccess)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return result;
}

// Whether `message` names the calls of rank r and of rank r + half for
// some r. Where each pair disagrees on its own (a send and a receive between
// each rank of the first half and one of the second), a rank may learn of
// another pair's disagreement before its own and report that one; the
// collectives' calls depend only on the half, so every pair names them.
bool namesADisagreeingPair(const std::string& message, const MismatchCase& c) {
  const int half = c.nranks / 2;
  auto names = [&](const Call& call) {
    return message.find(call.description()) != std::string::npos;
  };
  for (int rank = 0; rank < half; ++rank)
    if (names(callOf(c.what, rank, c.nranks)) &&
        names(callOf(c.what, rank + half, c.nranks)))
      return true;
  return false;
}

void runMismatch(const MismatchCase& c, RankContext& ctx) {
  ncclComm_t comm = ctx.initComm();
  checkDomainCount(comm, c.layout.count());
  HostStream stream;
  std::vector<float> send(kCount, 1.0f + ctx.rank()), recv(kCount, 0.0f);
  const Call mine = callOf(c.what, ctx.rank(), c.nranks);
  const double start = nowSeconds();
  const ncclResult_t result = firstError(
      post(mine, send, recv, comm, stream.get()), comm, stream.get(), start);
  const double seconds = nowSeconds() - start;
  MP_CHECK(result == ncclInvalidUsage)
      << c.name() << ": rank " << ctx.rank() << " calling "
      << mine.description() << " got " << describeResult(result) << " after "
      << seconds << " s";
  MP_CHECK(seconds < kDetectSeconds)
      << c.name() << ": noticed only after " << seconds << " s";
  const std::string message = ncclGetLastError(comm);
  MP_CHECK(namesADisagreeingPair(message, c))
      << c.name() << ": rank " << ctx.rank() << "'s message names no pair of "
      << "calls that disagree: " << message;
  const double abortStart = nowSeconds();
  MP_CHECK_NCCL(ncclCommAbort(comm));
  hetcclStreamSynchronize(stream.get());  // released, whatever its result
  MP_CHECK(nowSeconds() - abortStart < kAbortSeconds)
      << c.name() << ": abort and synchronize took "
      << nowSeconds() - abortStart << " s";
}

// Two, or one for each label.
int ranksOf(const DomainLayout& layout) {
  if (layout.hosts > 0)
    throw std::invalid_argument(layout.name() + " needs a rank count");
  return layout.labels.empty() ? 2 : static_cast<int>(layout.labels.size());
}

}  // namespace

std::string MismatchCase::name() const {
  return std::string(nameOf(what)) + "_" + layout.name();
}

void PrintTo(const MismatchCase& c, std::ostream* out) { *out << c.name(); }

std::vector<MismatchCase> mismatchMatrix(
    const std::vector<DomainLayout>& layouts, int nranks) {
  std::vector<MismatchCase> cases;
  for (Disagreement what :
       {Disagreement::Count, Disagreement::Type, Disagreement::Reduction,
        Disagreement::Kind, Disagreement::Root, Disagreement::FacingRoots,
        Disagreement::SendRecvCount})
    for (const DomainLayout& layout : layouts)
      cases.push_back({what, layout, nranks > 0 ? nranks : ranksOf(layout)});
  return cases;
}

void runMismatchCase(const MismatchCase& c, RunOptions options) {
  if (c.layout.env.count("HETCCL_TRANSPORT") &&
      c.layout.env.at("HETCCL_TRANSPORT") == "ucx" && !ucxModuleBuilt())
    GTEST_SKIP() << "this build has no UCX module";
  options.timeoutSeconds = 60;
  options.env["HETCCL_TIMEOUT"] = "30";
  c.layout.applyTo(&options);
  runRanks(
      c.nranks, [&](RankContext& ctx) { runMismatch(c, ctx); }, options);
}

}  // namespace hetccl::mp
