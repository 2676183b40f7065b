#include "harness/fail_stop.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

// HETCCL_TIMEOUT: long for departures (only their own detection counts),
// short for a stopped rank (only the timeout can tell).
constexpr int kLongTimeoutSeconds = 60;
constexpr int kStopTimeoutSeconds = 2;
// How long a survivor may take to fail: the 2 s, plus slack for
// CI's two loaded cores.
constexpr double kDetectionSeconds = 2 + 2;
constexpr double kAbortSeconds = 5;

constexpr int kOperations = 7;

const char* nameOf(Departure departure) {
  switch (departure) {
    case Departure::Exit:
      return "exit";
    case Departure::DestroyThenExit:
      return "destroyThenExit";
    case Departure::Kill:
      return "sigkill";
    case Departure::Stop:
      return "sigstop";
  }
  return "?";
}

const char* nameOf(Operation operation) {
  switch (operation) {
    case Operation::AllReduce:
      return "allReduce";
    case Operation::AllGather:
      return "allGather";
    case Operation::ReduceScatter:
      return "reduceScatter";
    case Operation::Broadcast:
      return "broadcast";
    case Operation::AllToAll:
      return "allToAll";
    case Operation::SendRecvRing:
      return "sendRecvRing";
    case Operation::GroupOfTwo:
      return "groupOfTwo";
  }
  return "?";
}

// A value no earlier round of any rank produced at this index.
int32_t valueOf(int round, int rank, size_t index) {
  return static_cast<int32_t>(round * 1000003 + rank * 7919 + index % 9973);
}

// One operation's buffers and what the survivor must find in them.
struct Exchange {
  std::vector<int32_t> send, recv, expected;
  // A second pair for the group of two collectives.
  std::vector<int32_t> send2, recv2, expected2;
};

Exchange prepare(Operation operation, int round, int rank, int n,
                 size_t count) {
  Exchange x;
  auto fill = [&](std::vector<int32_t>& v, size_t size, int ofRank) {
    v.resize(size);
    for (size_t i = 0; i < size; ++i) v[i] = valueOf(round, ofRank, i);
  };
  switch (operation) {
    case Operation::AllReduce:
    case Operation::GroupOfTwo:
      fill(x.send, count, rank);
      x.expected.assign(count, 0);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          x.expected[i] += valueOf(round, r, i);
      x.recv.assign(count, -1);
      if (operation == Operation::AllReduce) break;
      fill(x.send2, count, rank + 100);
      x.expected2.resize(count * n);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          x.expected2[r * count + i] = valueOf(round, r + 100, i);
      x.recv2.assign(count * n, -1);
      break;
    case Operation::AllGather:
      fill(x.send, count, rank);
      x.expected.resize(count * n);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          x.expected[r * count + i] = valueOf(round, r, i);
      x.recv.assign(count * n, -1);
      break;
    case Operation::ReduceScatter:
      fill(x.send, count * n, rank);
      x.expected.assign(count, 0);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          x.expected[i] += valueOf(round, r, rank * count + i);
      x.recv.assign(count, -1);
      break;
    case Operation::Broadcast:  // from the last rank, which stays
      fill(x.send, count, rank);
      fill(x.expected, count, n - 1);
      x.recv.assign(count, -1);
      break;
    case Operation::AllToAll:
      fill(x.send, count * n, rank);
      x.expected.resize(count * n);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          x.expected[r * count + i] = valueOf(round, r, rank * count + i);
      x.recv.assign(count * n, -1);
      break;
    case Operation::SendRecvRing:
      fill(x.send, count, rank);
      fill(x.expected, count, (rank + n - 1) % n);
      x.recv.assign(count, -1);
      break;
  }
  return x;
}

ncclResult_t post(Operation operation, Exchange& x, size_t count,
                  ncclComm_t comm, cudaStream_t stream, int rank, int n) {
  switch (operation) {
    case Operation::AllReduce:
      return ncclAllReduce(x.send.data(), x.recv.data(), count, ncclInt32,
                           ncclSum, comm, stream);
    case Operation::AllGather:
      return ncclAllGather(x.send.data(), x.recv.data(), count, ncclInt32, comm,
                           stream);
    case Operation::ReduceScatter:
      return ncclReduceScatter(x.send.data(), x.recv.data(), count, ncclInt32,
                               ncclSum, comm, stream);
    case Operation::Broadcast:
      return ncclBroadcast(x.send.data(), x.recv.data(), count, ncclInt32,
                           n - 1, comm, stream);
    case Operation::AllToAll:
      return ncclAlltoAll(x.send.data(), x.recv.data(), count, ncclInt32, comm,
                          stream);
    case Operation::SendRecvRing: {
      ncclResult_t result = ncclGroupStart();
      if (result != ncclSuccess) return result;
      ncclSend(x.send.data(), count, ncclInt32, (rank + 1) % n, comm, stream);
      ncclRecv(x.recv.data(), count, ncclInt32, (rank + n - 1) % n, comm,
               stream);
      return ncclGroupEnd();
    }
    case Operation::GroupOfTwo: {
      ncclResult_t result = ncclGroupStart();
      if (result != ncclSuccess) return result;
      ncclAllReduce(x.send.data(), x.recv.data(), count, ncclInt32, ncclSum,
                    comm, stream);
      ncclAllGather(x.send2.data(), x.recv2.data(), count, ncclInt32, comm,
                    stream);
      return ncclGroupEnd();
    }
  }
  return ncclInternalError;
}

bool matches(const Exchange& x) {
  return x.recv == x.expected && x.recv2 == x.expected2;
}

void leave(Departure departure, ncclComm_t comm) {
  switch (departure) {
    case Departure::Exit:
      std::exit(0);
    case Departure::DestroyThenExit:
      ncclCommDestroy(comm);
      std::exit(0);
    case Departure::Kill:
      ::raise(SIGKILL);
      break;
    case Departure::Stop:
      ::raise(SIGSTOP);
      break;
  }
}

// A survivor's operation after the departure: it completes right or
// fails in time. A GPU stream does not run past a failed operation before
// the abort (its contract; afterwards its results are undefined, as with
// NCCL); a CPU rank's stream reports the failure itself. The abort
// returns promptly.
void survive(const FailStopCase& param, int rank, ncclComm_t comm,
             double limitSeconds) {
  HostStream stream;
  Exchange x = prepare(param.operation, 1, rank, param.nranks, param.count);
  const double start = nowSeconds();
  ncclResult_t error = post(param.operation, x, param.count, comm, stream.get(),
                            rank, param.nranks);
  const bool posted = error == ncclSuccess;
  bool streamDone = false;
  while (error == ncclSuccess && !streamDone &&
         nowSeconds() - start < limitSeconds) {
    streamDone = hetcclStreamQuery(stream.get()) != ncclInProgress;
    MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &error));
    if (!streamDone && error == ncclSuccess)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double seconds = nowSeconds() - start;
  // A stream that finished reports how: a success must be the right result
  // (an operation that did not need the rank that left).
  if (posted && hetcclStreamQuery(stream.get()) != ncclInProgress) {
    const ncclResult_t synced = hetcclStreamSynchronize(stream.get());
    MP_CHECK(synced != ncclSuccess || matches(x))
        << param.name() << ": rank " << rank
        << "'s operation reported success with a wrong result";
    if (synced == ncclSuccess) {
      MP_CHECK_NCCL(ncclCommAbort(comm));
      return;
    }
    if (error == ncclSuccess) error = synced;
  }
  MP_CHECK(error == ncclRemoteError)
      << param.name() << ": rank " << rank << " got "
      << ncclGetErrorString(error) << " after " << seconds << " s";
  MP_CHECK(seconds < limitSeconds) << param.name() << ": rank " << rank
                                   << " noticed only after " << seconds << " s";
  const char* message = ncclGetLastError(comm);
  MP_CHECK(message != nullptr && message[0] != '\0')
      << "no message for the error";
  // A survivor that heard of the departure from another survivor names
  // the rank that left, not the messenger. (A stopped rank is only
  // silent: who names it first is a matter of timing.)
  const std::string leaver = "rank " + std::to_string(param.leaving);
  if (param.departure != Departure::Stop)
    MP_CHECK(std::string(message).find(leaver) != std::string::npos)
        << param.name() << ": rank " << rank << "'s error does not name "
        << leaver << ", which left: " << message;
  const double abortStart = nowSeconds();
  MP_CHECK_NCCL(ncclCommAbort(comm));
  const ncclResult_t synced = hetcclStreamSynchronize(stream.get());
  MP_CHECK(nowSeconds() - abortStart < kAbortSeconds)
      << "abort and synchronize took " << nowSeconds() - abortStart << " s";
  // An operation refused at its call (the communicator had already failed:
  // another survivor reported the departure first) left nothing on the
  // stream, and its buffers untouched.
  if (posted && !param.layout.emulatedGpus)
    MP_CHECK(synced != ncclSuccess || matches(x))
        << param.name() << ": rank " << rank
        << "'s failed operation synchronized as a success with a wrong "
           "result";
}

}  // namespace

std::string FailStopCase::name() const {
  return layoutName + "_" + nameOf(departure) + "_" + nameOf(operation) + "_" +
         std::to_string(count);
}

void PrintTo(const FailStopCase& param, std::ostream* out) {
  *out << param.name();
}

std::vector<FailStopCase> failStopMatrix(
    const std::vector<std::pair<std::string, DomainLayout>>& layouts,
    int nranks, int leaving) {
  const Departure departures[] = {Departure::Exit, Departure::DestroyThenExit,
                                  Departure::Kill, Departure::Stop};
  std::vector<FailStopCase> cases;
  int index = 0;
  for (const auto& layout : layouts)
    for (Departure departure : departures) {
      const Operation operation = static_cast<Operation>(index % kOperations);
      const size_t count = index % 2 ? 300007 : 4099;
      cases.push_back({layout.second, layout.first, departure, operation, count,
                       nranks, leaving});
      ++index;
    }
  return cases;
}

void runFailStopCase(const FailStopCase& param, RunOptions options) {
  const bool stop = param.departure == Departure::Stop;
  const int timeout = stop ? kStopTimeoutSeconds : kLongTimeoutSeconds;
  options.timeoutSeconds = 90;
  param.layout.applyTo(&options);
  options.env["HETCCL_TIMEOUT"] = std::to_string(timeout);
  if (stop || param.departure == Departure::Kill)
    options.expectedSignals[param.leaving] = SIGKILL;
  const double limit = kDetectionSeconds + (stop ? timeout : 0);
  runRanks(
      param.nranks,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, param.layout.count());
        {
          HostStream stream;
          Exchange x = prepare(param.operation, 0, ctx.rank(), param.nranks,
                               param.count);
          MP_CHECK_NCCL(post(param.operation, x, param.count, comm,
                             stream.get(), ctx.rank(), param.nranks));
          stream.synchronize();
          MP_CHECK(matches(x)) << "the operation before the departure";
        }
        const std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        if (ctx.rank() == param.leaving) return leave(param.departure, comm);
        survive(param, ctx.rank(), comm, limit);
        if (stop && ctx.rank() == 0)
          ::kill(std::stoi(pids[param.leaving]), SIGKILL);
      },
      options);
}

}  // namespace hetccl::mp
