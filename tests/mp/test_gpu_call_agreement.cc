// GPU ranks of one host, each its own domain (the stream-driven path),
// that call different collectives, or a send and a receive that do not
// match: every rank fails with ncclInvalidUsage naming both calls within
// a second, from the call or from ncclCommGetAsyncError while its stream
// stays blocked, instead of combining or receiving buffers of different
// meaning. Small collectives take the low-latency kernel, large ones the
// pipelined path; both wait for the agreement. Sends and receives that
// match still arrive whole.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

constexpr double kDetectionSeconds = 1.0 + 1.0;  // 1 s, plus CI's slack
constexpr double kAbortSeconds = 5;

// The abort releases this rank's blocked stream in time.
void abortPromptly(ncclComm_t comm, cudaStream_t stream) {
  const double abortStart = nowSeconds();
  MP_CHECK_NCCL(ncclCommAbort(comm));
  hetcclStreamSynchronize(stream);
  MP_CHECK(nowSeconds() - abortStart < kAbortSeconds)
      << "abort took " << nowSeconds() - abortStart << " s";
}

struct Call {
  enum Kind { AllReduce, Broadcast } kind = AllReduce;
  size_t count = 0;
  ncclDataType_t dtype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
};

struct Disagreement {
  std::string name;
  Call rank0, rank1;
  const char* rank1Says;  // what the message must say of rank 1's call
};

std::vector<Disagreement> disagreements(size_t count) {
  Call base{Call::AllReduce, count, ncclFloat32, ncclSum, 0};
  Call half = base, dtype = base, op = base, kind = base, root = base;
  half.count = count / 2;
  dtype.dtype = ncclInt32;  // the same bytes
  op.op = ncclMax;
  kind.kind = Call::Broadcast;
  Call broadcast = base;
  broadcast.kind = Call::Broadcast;
  root = broadcast;
  root.root = 1;
  const std::string size = std::to_string(count);
  return {
      {"count" + size, base, half, "allReduce("},
      {"dtype" + size, base, dtype, "x int32, sum)"},
      {"op" + size, base, op, "x float32, max)"},
      {"kind" + size, base, kind, "broadcast("},
      {"root" + size, broadcast, root, "root 1)"},
  };
}

ncclResult_t post(const Call& call, std::vector<float>& buffer, ncclComm_t comm,
                  cudaStream_t stream) {
  if (call.kind == Call::Broadcast)
    return ncclBroadcast(buffer.data(), buffer.data(), call.count, call.dtype,
                         call.root, comm, stream);
  return ncclAllReduce(buffer.data(), buffer.data(), call.count, call.dtype,
                       call.op, comm, stream);
}

class GpuCallAgreementTest : public ::testing::TestWithParam<Disagreement> {};

TEST_P(GpuCallAgreementTest, EveryRankFailsNamingBothCalls) {
  const Disagreement& d = GetParam();
  RunOptions options;
  options.timeoutSeconds = 60;
  emulatedGpuDomains({0, 1}).applyTo(&options);
  options.env["HETCCL_TIMEOUT"] = "30";
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, 2);
        HostStream stream;
        std::vector<float> buffer(d.rank0.count, 1.0f);
        const Call& mine = ctx.rank() == 0 ? d.rank0 : d.rank1;
        const double start = nowSeconds();
        ncclResult_t error = post(mine, buffer, comm, stream.get());
        while (error == ncclSuccess &&
               nowSeconds() - start < kDetectionSeconds) {
          MP_CHECK(hetcclStreamQuery(stream.get()) == ncclInProgress)
              << d.name << ": rank " << ctx.rank()
              << "'s stream ran past calls that disagree";
          MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &error));
          if (error == ncclSuccess)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        const double seconds = nowSeconds() - start;
        MP_CHECK(error == ncclInvalidUsage)
            << d.name << ": rank " << ctx.rank() << " got "
            << ncclGetErrorString(error) << " after " << seconds << " s";
        // "op #1: rank 1 called allReduce(500 x float32, sum) but rank 0
        // called allReduce(1001 x float32, sum)", from either side.
        const std::string message = ncclGetLastError(comm);
        MP_CHECK(message.find("rank 0 called") != std::string::npos &&
                 message.find("rank 1 called") != std::string::npos &&
                 message.find(d.rank1Says) != std::string::npos)
            << d.name << ": " << message;
        abortPromptly(comm, stream.get());
      },
      options);
}

std::vector<Disagreement> everyDisagreement() {
  std::vector<Disagreement> all = disagreements(1001);  // low-latency kernel
  for (const Disagreement& d : disagreements(1 << 20)) all.push_back(d);
  return all;
}

INSTANTIATE_TEST_SUITE_P(
    Mp, GpuCallAgreementTest, ::testing::ValuesIn(everyDisagreement()),
    [](const ::testing::TestParamInfo<Disagreement>& info) {
      return info.param.name;
    });

// One send or receive of a rank, and its buffer: a send's bytes never
// hold kUntouched, a receive's start as kUntouched.
constexpr unsigned char kUntouched = 0x5a;

struct Transfer {
  bool send;
  int peer;
  size_t count;
  ncclDataType_t dtype = ncclFloat32;
};

size_t bytesOf(const Transfer& t) {
  return t.count * kit::dataTypeOf(t.dtype).size;
}

// The index-th byte that `from` sends in its `nth` transfer of a test.
unsigned char sentByte(int from, int nth, size_t index) {
  return static_cast<unsigned char>(0x10 + (from * 7 + nth * 13 + index) % 64);
}

struct TransferBuffers {
  std::vector<std::vector<unsigned char>> data;  // by transfer

  TransferBuffers(int rank, const std::vector<Transfer>& transfers) {
    for (size_t i = 0; i < transfers.size(); ++i) {
      std::vector<unsigned char> bytes(bytesOf(transfers[i]), kUntouched);
      if (transfers[i].send)
        for (size_t b = 0; b < bytes.size(); ++b)
          bytes[b] = sentByte(rank, static_cast<int>(i), b);
      data.push_back(std::move(bytes));
    }
  }
};

// Posts `transfers` in order, as a group if there are several; the
// group's result (or the single call's).
ncclResult_t postTransfers(const std::vector<Transfer>& transfers,
                           TransferBuffers& buffers, ncclComm_t comm,
                           cudaStream_t stream) {
  const bool grouped = transfers.size() > 1;
  if (grouped) MP_CHECK_NCCL(ncclGroupStart());
  ncclResult_t first = ncclSuccess;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    void* data = buffers.data[i].data();
    const ncclResult_t result =
        t.send ? ncclSend(data, t.count, t.dtype, t.peer, comm, stream)
               : ncclRecv(data, t.count, t.dtype, t.peer, comm, stream);
    if (first == ncclSuccess) first = result;
  }
  const ncclResult_t ended = grouped ? ncclGroupEnd() : ncclSuccess;
  return first != ncclSuccess ? first : ended;
}

struct TransferDisagreement {
  std::string name;
  std::vector<std::vector<Transfer>> byRank;
  int late;  // posts after the others: its call is the one that compares
  // The receive of the transfer that disagrees: its buffer stays untouched.
  int receiver;
  size_t receiveIndex;
  std::vector<std::string> says;  // what every rank's message must say
};

// gtest prints parameters in test listings (and so in ctest names).
void PrintTo(const TransferDisagreement& d, std::ostream* out) {
  *out << d.name;
}

constexpr double kLateSeconds = 0.3;

// A send of 1000 x float32 from rank 0 met by another receive on rank 1
// (fewer elements, another type of the same size, none), the receiver or
// the sender posting last.
std::vector<TransferDisagreement> pairDisagreements() {
  const Transfer send{true, 1, 1000, ncclFloat32};
  const Transfer half{false, 0, 500, ncclFloat32};
  const Transfer otherType{false, 0, 1000, ncclInt32};  // the same bytes
  // Moves nothing: only the wait for the agreement holds its stream.
  const Transfer empty{false, 0, 0, ncclFloat32};
  const std::string sent = "rank 0 called send(1000 x float32, to rank 1)";
  std::vector<TransferDisagreement> cases;
  for (int late : {0, 1}) {
    const std::string who = late == 1 ? "_receiverLast" : "_senderLast";
    cases.push_back({"count" + who,
                     {{send}, {half}},
                     late,
                     1,
                     0,
                     {sent, "rank 1 called recv(500 x float32, from rank 0)"}});
    cases.push_back({"dtype" + who,
                     {{send}, {otherType}},
                     late,
                     1,
                     0,
                     {sent, "rank 1 called recv(1000 x int32, from rank 0)"}});
    cases.push_back({"emptyReceive" + who,
                     {{send}, {empty}},
                     late,
                     1,
                     0,
                     {sent, "rank 1 called recv(0 x float32, from rank 0)"}});
  }
  return cases;
}

// A group of a send to the next rank and a receive from the previous one
// on each of 3 ranks, rank 2's send to rank 0 shorter than rank 0's
// receive; rank 0 or rank 2 posts last.
std::vector<TransferDisagreement> ringDisagreements() {
  auto group = [](int rank, size_t sendCount) {
    return std::vector<Transfer>{{true, (rank + 1) % 3, sendCount},
                                 {false, (rank + 2) % 3, 4096}};
  };
  const std::vector<std::vector<Transfer>> ring = {
      group(0, 4096), group(1, 4096), group(2, 99)};
  const std::vector<std::string> says = {
      "rank 0 called recv(4096 x float32, from rank 2)",
      "rank 2 called send(99 x float32, to rank 0)"};
  return {{"ring_receiverLast", ring, 0, 0, 1, says},
          {"ring_senderLast", ring, 2, 0, 1, says}};
}

class GpuTransferAgreementTest
    : public ::testing::TestWithParam<TransferDisagreement> {};

TEST_P(GpuTransferAgreementTest, EveryRankFailsNamingBothCalls) {
  const TransferDisagreement& d = GetParam();
  const int nranks = static_cast<int>(d.byRank.size());
  RunOptions options;
  options.timeoutSeconds = 60;
  emulatedGpuDomains(nranks == 2 ? std::vector<int>{0, 1}
                                 : std::vector<int>{0, 1, 2})
      .applyTo(&options);
  options.env["HETCCL_TIMEOUT"] = "30";
  runRanks(
      nranks,
      [&](RankContext& ctx) {
        const int rank = ctx.rank();
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, nranks);
        HostStream stream;
        TransferBuffers buffers(rank, d.byRank[rank]);
        ctx.barrier();
        if (rank == d.late)
          std::this_thread::sleep_for(
              std::chrono::milliseconds(int(kLateSeconds * 1000)));
        const double start = nowSeconds();
        ncclResult_t error =
            postTransfers(d.byRank[rank], buffers, comm, stream.get());
        MP_CHECK(rank != d.late || error == ncclInvalidUsage)
            << d.name << ": the call that compared returned "
            << ncclGetErrorString(error);
        const bool posted = error == ncclSuccess;
        while (error == ncclSuccess &&
               nowSeconds() - start < kLateSeconds + kDetectionSeconds) {
          MP_CHECK(hetcclStreamQuery(stream.get()) == ncclInProgress)
              << d.name << ": rank " << rank
              << "'s stream ran past transfers that disagree";
          MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &error));
          if (error == ncclSuccess)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        MP_CHECK(error == ncclInvalidUsage)
            << d.name << ": rank " << rank << " got "
            << ncclGetErrorString(error) << " after " << nowSeconds() - start
            << " s";
        const std::string message = ncclGetLastError(comm);
        for (const std::string& part : d.says)
          MP_CHECK(message.find(part) != std::string::npos)
              << d.name << ": rank " << rank << ": " << message;
        // Still blocked, and nothing received, until the abort.
        MP_CHECK(!posted || hetcclStreamQuery(stream.get()) == ncclInProgress)
            << d.name << ": rank " << rank << "'s stream completed";
        if (rank == d.receiver) {
          const std::vector<unsigned char>& received =
              buffers.data[d.receiveIndex];
          MP_CHECK(received ==
                   std::vector<unsigned char>(received.size(), kUntouched))
              << d.name << ": rank " << rank
              << " received into its buffer from a send that disagrees";
        }
        abortPromptly(comm, stream.get());
      },
      options);
}

std::vector<TransferDisagreement> everyTransferDisagreement() {
  std::vector<TransferDisagreement> all = pairDisagreements();
  for (const TransferDisagreement& d : ringDisagreements()) all.push_back(d);
  return all;
}

INSTANTIATE_TEST_SUITE_P(
    Mp, GpuTransferAgreementTest,
    ::testing::ValuesIn(everyTransferDisagreement()),
    [](const ::testing::TestParamInfo<TransferDisagreement>& info) {
      return info.param.name;
    });

// Every received byte checked; `from` is the sender of a received buffer,
// `nth` the sender's index of the transfer.
void checkReceived(const std::vector<unsigned char>& received, int from,
                   int nth, const std::string& what) {
  for (size_t b = 0; b < received.size(); ++b)
    MP_CHECK(received[b] == sentByte(from, nth, b))
        << what << ": byte " << b << " of " << received.size() << " is "
        << int(received[b]);
}

// Sends and receives that match pass the check and arrive whole: a ring
// both ways in a group at several sizes and types, a group of several
// sends to one peer met by single receives with a synchronize after each
// (each send waits for its own receive's post, not for the last), and
// more single transfers each way than a lane's ring of signatures holds.
TEST(GpuTransferAgreement, MatchingTransfersArriveWhole) {
  constexpr int kRanks = 3;
  RunOptions options;
  options.timeoutSeconds = 120;
  emulatedGpuDomains({0, 1, 2}).applyTo(&options);
  runRanks(
      kRanks,
      [&](RankContext& ctx) {
        const int rank = ctx.rank();
        const int next = (rank + 1) % kRanks, previous = (rank + 2) % kRanks;
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, kRanks);
        HostStream stream;
        for (const Transfer& shape :
             {Transfer{true, 0, 0, ncclFloat32}, Transfer{true, 0, 1, ncclInt8},
              Transfer{true, 0, 1001, ncclFloat64},
              Transfer{true, 0, (1 << 20) + 3, ncclFloat32}}) {
          // Sends first: index 0 to the next rank, 1 to the previous.
          std::vector<Transfer> ring = {shape, shape, shape, shape};
          ring[0].peer = next;
          ring[1].peer = previous;
          ring[2] = {false, previous, shape.count, shape.dtype};
          ring[3] = {false, next, shape.count, shape.dtype};
          TransferBuffers buffers(rank, ring);
          MP_CHECK_NCCL(postTransfers(ring, buffers, comm, stream.get()));
          stream.synchronize();
          const std::string what = "ring of " + std::to_string(shape.count);
          checkReceived(buffers.data[2], previous, 0, what + " from previous");
          checkReceived(buffers.data[3], next, 1, what + " from next");
        }
        // Rank 0 sends three in one group, rank 1 receives them singly.
        const std::vector<Transfer> three = {
            {true, 1, 100}, {true, 1, 70000}, {true, 1, 3, ncclInt32}};
        if (rank == 0) {
          TransferBuffers buffers(rank, three);
          MP_CHECK_NCCL(postTransfers(three, buffers, comm, stream.get()));
          stream.synchronize();
        } else if (rank == 1) {
          for (int i = 0; i < 3; ++i) {
            const std::vector<Transfer> one = {
                {false, 0, three[i].count, three[i].dtype}};
            TransferBuffers buffers(rank, one);
            MP_CHECK_NCCL(postTransfers(one, buffers, comm, stream.get()));
            stream.synchronize();
            checkReceived(buffers.data[0], 0, i, "single receive");
          }
        }
        // Ranks 0 and 1 exchange 300 single transfers each way.
        if (rank < 2) {
          const Transfer send{true, 1 - rank, 5, ncclInt8};
          const Transfer receive{false, 1 - rank, 5, ncclInt8};
          std::vector<TransferBuffers> sent, received;
          sent.reserve(300);
          received.reserve(300);
          for (int i = 0; i < 300; ++i) {
            sent.emplace_back(rank, std::vector<Transfer>{send});
            received.emplace_back(rank, std::vector<Transfer>{receive});
            // The lower rank sends first, so that neither waits for the
            // other's stream.
            for (bool sends : {rank == 0, rank != 0}) {
              MP_CHECK_NCCL(postTransfers({sends ? send : receive},
                                          sends ? sent.back() : received.back(),
                                          comm, stream.get()));
            }
          }
          stream.synchronize();
          for (int i = 0; i < 300; ++i)
            checkReceived(received[i].data[0], 1 - rank, 0,
                          "single transfer " + std::to_string(i));
        }
        MP_CHECK_NCCL(ncclCommDestroy(comm));
      },
      options);
}

}  // namespace
}  // namespace hetccl::mp
