// The stream-driven GPU collectives, run on the emulated device module:
// ranks are threads, their "GPU" streams host streams. Every kind, one
// after another on one stream per rank (so that the outbox counters carry
// over from kind to kind), checked bit for bit against results computed
// here with the host collectives' reduction in rank order: across chunk
// boundaries, slot reuse, uneven shards, roots and in-place use.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/gpu/hostshm/device_shm_collectives.h"
#include "op/op_traits.h"
#include "runtime/host/emulated_device_module.h"
#include "runtime/host/host_reduce.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"
#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr size_t kChunkBytes = 4096;  // small: many chunks, slots reused

struct Case {
  OpKind kind;
  ncclDataType_t dtype;
  ncclRedOp_t op;
  size_t count;  // as NCCL's count argument of the kind
  bool inPlace;
  bool average = false;
  bool preMultiply = false;
  int root = 0;
};

size_t bytesOf(const Case& c, size_t elements) {
  return elements * dtypeSize(c.dtype);
}

// Elements of the input and of the output, per rank.
size_t inputElements(const Case& c, int nranks) {
  bool parts = c.kind == OpKind::ReduceScatter || c.kind == OpKind::AlltoAll ||
               c.kind == OpKind::Scatter;
  return parts ? c.count * nranks : c.count;
}

size_t outputElements(const Case& c, int nranks) {
  bool parts = c.kind == OpKind::AllGather || c.kind == OpKind::AlltoAll ||
               c.kind == OpKind::Gather;
  return parts ? c.count * nranks : c.count;
}

// Rank r's input: random bits, made finite for floating types so that
// sums stay comparable (NaN payloads are not what this test is about).
std::vector<char> inputOf(const Case& c, int rank, int nranks) {
  std::vector<char> data(bytesOf(c, inputElements(c, nranks)));
  std::mt19937 random(1234 + rank + 17 * static_cast<int>(c.kind));
  for (char& byte : data) byte = static_cast<char>(random() & 0x3f);
  return data;
}

uint64_t scalarOf(const Case& c) {
  uint64_t scalar = 0;
  float two = 2.0f;
  if (c.dtype == ncclFloat32) std::memcpy(&scalar, &two, 4);
  if (c.dtype == ncclInt32) scalar = 3;
  return scalar;
}

// The reduction over ranks of elements [first, first + count) of each
// input.
std::vector<char> reduced(const Case& c, int nranks, size_t first,
                          size_t count) {
  std::vector<std::vector<char>> inputs;
  std::vector<const void*> sources;
  for (int r = 0; r < nranks; ++r) inputs.push_back(inputOf(c, r, nranks));
  for (auto& input : inputs)
    sources.push_back(input.data() + bytesOf(c, first));
  std::vector<char> result(bytesOf(c, count));
  uint64_t scalar = scalarOf(c);
  Reduction reduction{c.dtype, c.op};
  if (c.preMultiply) reduction.preScale = &scalar;
  if (c.average) reduction.divisor = static_cast<uint64_t>(nranks);
  hostReduce(result.data(), sources.data(), nranks, count, reduction);
  return result;
}

std::vector<char> concatenatedInputs(const Case& c, int nranks) {
  std::vector<char> result;
  for (int r = 0; r < nranks; ++r) {
    auto input = inputOf(c, r, nranks);
    result.insert(result.end(), input.begin(), input.end());
  }
  return result;
}

// Ranks other than the root of a reduce or gather have no defined output
// (nothing to check).
std::vector<char> expected(const Case& c, int rank, int nranks) {
  const size_t part = bytesOf(c, c.count);
  switch (c.kind) {
    case OpKind::Reduce:
      return rank == c.root ? reduced(c, nranks, 0, c.count)
                            : std::vector<char>();
    case OpKind::Gather:
      return rank == c.root ? concatenatedInputs(c, nranks)
                            : std::vector<char>();
    case OpKind::Scatter: {
      auto input = inputOf(c, c.root, nranks);
      return {input.begin() + rank * part, input.begin() + (rank + 1) * part};
    }
    case OpKind::AllReduce:
      return reduced(c, nranks, 0, c.count);
    case OpKind::ReduceScatter:
      return reduced(c, nranks, rank * c.count, c.count);
    case OpKind::Broadcast:
      return inputOf(c, c.root, nranks);
    case OpKind::AllGather:
      return concatenatedInputs(c, nranks);
    case OpKind::AlltoAll: {
      std::vector<char> result;
      for (int r = 0; r < nranks; ++r) {
        auto input = inputOf(c, r, nranks);
        result.insert(result.end(), input.begin() + rank * part,
                      input.begin() + (rank + 1) * part);
      }
      return result;
    }
    default:
      ADD_FAILURE() << "no expectation for " << opKindName(c.kind);
      return {};
  }
}

// One rank's buffers of a case. In place, one buffer holds the input where
// NCCL expects it (for all-gather and gather, at the rank's part of the
// output) and receives the output (for reduce-scatter and scatter, at the
// rank's part of the input).
struct RankBuffers {
  std::vector<char> send, recv;
  const void* sendPointer;  // into the vectors' heap storage
  void* recvPointer;
  bool inPlace;
  size_t outputOffset = 0;

  RankBuffers(const Case& c, int rank, int nranks) : inPlace(c.inPlace) {
    std::vector<char> input = inputOf(c, rank, nranks);
    const size_t part = bytesOf(c, c.count);
    const size_t outBytes = bytesOf(c, outputElements(c, nranks));
    if (!c.inPlace) {
      send = input;
      recv.assign(outBytes, '\x5a');
      sendPointer = send.data();
      recvPointer = recv.data();
    } else if (c.kind == OpKind::AllGather || c.kind == OpKind::Gather) {
      send.assign(outBytes, '\x5a');
      std::memcpy(send.data() + rank * part, input.data(), part);
      sendPointer = send.data() + rank * part;
      recvPointer = send.data();
    } else {
      send = input;
      sendPointer = send.data();
      bool scattered =
          c.kind == OpKind::ReduceScatter || c.kind == OpKind::Scatter;
      outputOffset = scattered ? rank * part : 0;
      recvPointer = send.data() + outputOffset;
    }
  }

  std::vector<char> result(size_t bytes) const {
    const std::vector<char>& output = inPlace ? send : recv;
    return {output.begin() + outputOffset,
            output.begin() + outputOffset + bytes};
  }
};

Op makeOp(const Case& c, const void* send, void* recv, const uint64_t& scalar) {
  Op op;
  op.kind = c.kind;
  op.sendbuff = send;
  op.recvbuff = recv;
  op.count = c.count;
  op.dtype = c.dtype;
  op.root = c.root;
  op.reduce.base = c.op;
  op.reduce.average = c.average;
  op.reduce.preMultiply = c.preMultiply;
  op.reduce.scalarValue = scalar;
  return op;
}

struct Options {
  size_t chunkBytes = kChunkBytes;
  size_t lowLatencyMaxBytes = 0;  // HETCCL_GPU_LL_MAX
  int streams = 1;                // launches take them in turn
};

// Runs every case on `nranks` thread ranks, one launch after another, and
// checks each rank's outputs.
void runCases(int nranks, const std::vector<Case>& cases,
              Options options = {}) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(nranks);
  runRanks(nranks, [&](int rank) {
    InProcessOob oob(world, rank);
    DeviceShmCollectives collectives(oob, module, options.chunkBytes,
                                     options.lowLatencyMaxBytes);
    std::vector<void*> streams(options.streams);
    for (void*& stream : streams)
      ASSERT_EQ(module.api().streamCreate(&stream), 0);
    std::vector<RankBuffers> buffers;
    for (const Case& c : cases) buffers.emplace_back(c, rank, nranks);
    for (size_t i = 0; i < cases.size(); ++i) {
      Op op = makeOp(cases[i], buffers[i].sendPointer, buffers[i].recvPointer,
                     scalarOf(cases[i]));
      ASSERT_TRUE(collectives.handles({op})) << opKindName(op.kind);
      collectives.launch(op, streams[i % streams.size()], /*capturing=*/false,
                         /*agreed=*/true);
    }
    for (void* stream : streams)
      ASSERT_EQ(module.api().streamSynchronize(stream), 0);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      std::vector<char> want = expected(c, rank, nranks);
      EXPECT_EQ(buffers[i].result(want.size()), want)
          << "rank " << rank << " case " << i << " (" << opKindName(c.kind)
          << ", " << dtypeName(c.dtype) << ", " << c.count << " elements"
          << (c.inPlace ? ", in place" : "") << ")";
    }
    for (void* stream : streams) module.api().streamDestroy(stream);
  });
}

const std::vector<Case> kAllReduceCases = {
    {OpKind::AllReduce, ncclFloat32, ncclSum, 1, false},
    {OpKind::AllReduce, ncclFloat32, ncclSum, 7, true},
    {OpKind::AllReduce, ncclFloat32, ncclSum, 10001, false},  // ~10 chunks
    {OpKind::AllReduce, ncclBfloat16, ncclSum, 5003, true},
    {OpKind::AllReduce, ncclFloat16, ncclMax, 4099, false},
    {OpKind::AllReduce, ncclInt32, ncclProd, 3000, false},
    {OpKind::AllReduce, ncclInt64, ncclMin, 1025, true},
    {OpKind::AllReduce, ncclFloat32, ncclSum, 2049, false, true},  // avg
    {OpKind::AllReduce, ncclInt32, ncclSum, 999, false, true},
    {OpKind::AllReduce, ncclFloat32, ncclSum, 3333, false, false, true},
    {OpKind::AllReduce, ncclInt32, ncclSum, 1111, true, false, true},
    {OpKind::AllReduce, ncclFloat8e4m3, ncclSum, 9000, false},
    {OpKind::AllReduce, ncclUint8, ncclMax, 8191, true},
    {OpKind::AllReduce, ncclFloat64, ncclSum, 0, false},
};

// Every other kind, interleaved, so that each starts where a different
// kind left the counters.
const std::vector<Case> kOtherCases = {
    {OpKind::ReduceScatter, ncclFloat32, ncclSum, 3001, false},
    {OpKind::AllGather, ncclFloat32, ncclSum, 2999, false},
    {OpKind::Broadcast, ncclBfloat16, ncclSum, 7777, false, false, false, 1},
    {OpKind::AlltoAll, ncclInt32, ncclSum, 1500, false},
    {OpKind::AllReduce, ncclFloat32, ncclSum, 1234, false},
    {OpKind::ReduceScatter, ncclFloat16, ncclMax, 1025, true},
    {OpKind::AllGather, ncclUint8, ncclSum, 4097, true},
    {OpKind::Broadcast, ncclFloat64, ncclSum, 1000, true},
    {OpKind::AlltoAll, ncclFloat8e5m2, ncclSum, 3000, true},
    {OpKind::ReduceScatter, ncclInt32, ncclSum, 777, false, true},  // avg
    {OpKind::ReduceScatter, ncclFloat32, ncclSum, 513, false, false, true},
    {OpKind::AllGather, ncclInt64, ncclSum, 1, false},
    {OpKind::AlltoAll, ncclFloat32, ncclSum, 1, false},
    {OpKind::Broadcast, ncclInt8, ncclSum, 5, false},
    {OpKind::ReduceScatter, ncclFloat32, ncclSum, 0, false},
    {OpKind::Reduce, ncclFloat32, ncclSum, 3001, false, false, false, 1},
    {OpKind::Gather, ncclBfloat16, ncclSum, 2999, false, false, false, 0},
    {OpKind::Scatter, ncclInt32, ncclSum, 1501, false, false, false, 1},
    {OpKind::AllReduce, ncclFloat32, ncclSum, 99, true},
    {OpKind::Reduce, ncclFloat16, ncclMax, 1025, true},
    {OpKind::Gather, ncclUint8, ncclSum, 4097, true, false, false, 1},
    {OpKind::Scatter, ncclFloat64, ncclSum, 1000, true},
    {OpKind::Reduce, ncclInt32, ncclSum, 777, false, true},  // avg
    {OpKind::Reduce, ncclFloat32, ncclSum, 513, true, false, true, 1},
    {OpKind::Reduce, ncclFloat8e4m3, ncclProd, 5000, false},
    {OpKind::Gather, ncclInt64, ncclSum, 1, false},
    {OpKind::Scatter, ncclInt8, ncclSum, 5, false},
    {OpKind::Reduce, ncclFloat32, ncclSum, 0, false},
};

TEST(DeviceShmCollectives, AllReduceTwoRanks) { runCases(2, kAllReduceCases); }

TEST(DeviceShmCollectives, AllReduceThreeRanksUnevenShards) {
  runCases(3, kAllReduceCases);
}

TEST(DeviceShmCollectives, EveryKindTwoRanks) { runCases(2, kOtherCases); }

TEST(DeviceShmCollectives, EveryKindThreeRanks) { runCases(3, kOtherCases); }

// Ops of fewer than 4 configured chunks are cut into smaller steps (of at
// least 1 MiB), whose boundaries fall elsewhere than the chunks'.
TEST(DeviceShmCollectives, SmallOpsAreCutIntoPipelineSteps) {
  const std::vector<Case> cases = {
      {OpKind::AllReduce, ncclFloat32, ncclSum, 1310723, false},  // 4 steps
      {OpKind::AllReduce, ncclBfloat16, ncclSum, 700001, true},   // 2 steps
      {OpKind::AllGather, ncclFloat32, ncclSum, 1048583, false},
      {OpKind::ReduceScatter, ncclFloat32, ncclMax, 300007, false},
      {OpKind::AlltoAll, ncclFloat16, ncclSum, 600003, true},
      {OpKind::Broadcast, ncclFloat32, ncclSum, 1310723, false},
      {OpKind::Reduce, ncclFloat32, ncclSum, 700001, false},
      {OpKind::Gather, ncclBfloat16, ncclSum, 1048583, true},
      {OpKind::Scatter, ncclFloat32, ncclSum, 600003, false},
      {OpKind::AllReduce, ncclInt64, ncclSum, 5, false},  // one step
  };
  runCases(2, cases, {4 << 20});
  runCases(3, cases, {4 << 20});
}

// Collectives of at most 8 KiB take the low-latency kernel: the all-reduce
// cases fall on both sides of it (8191 bytes and 8196 to 8200), from one
// stream and from two in turn (a kernel on the other stream waits for the
// last one); so do some of the other kinds.
TEST(DeviceShmCollectives, AllReduceLowLatencyKernelAndPipelineMixed) {
  for (int streams : {1, 2}) {
    runCases(2, kAllReduceCases, {kChunkBytes, 8192, streams});
    runCases(3, kAllReduceCases, {kChunkBytes, 8192, streams});
  }
  runCases(3, kOtherCases, {kChunkBytes, 8192, 2});
}

// Every kind the low-latency kernel runs, dtype and operator (with
// average and a host scalar), at the threshold (of the larger buffer) and
// one element to either side of it, for `nranks` ranks.
std::vector<Case> aroundTheLowLatencyThreshold(int nranks, size_t threshold) {
  std::vector<Case> cases;
  for (ncclDataType_t dtype :
       {ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64,
        ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3,
        ncclFloat8e5m2}) {
    for (OpKind kind : {OpKind::AllReduce, OpKind::ReduceScatter,
                        OpKind::AllGather, OpKind::Broadcast}) {
      const bool parts =
          kind == OpKind::ReduceScatter || kind == OpKind::AllGather;
      const size_t atThreshold =
          threshold / dtypeSize(dtype) / (parts ? nranks : 1);
      const bool reduces =
          kind == OpKind::AllReduce || kind == OpKind::ReduceScatter;
      for (int mode = 0; mode < (reduces ? 6 : 1); ++mode)
        for (size_t count : {atThreshold - 1, atThreshold, atThreshold + 1}) {
          const ncclRedOp_t op = mode < 4 ? ncclRedOp_t(mode) : ncclSum;
          cases.push_back({kind, dtype, op, count, count % 2 == 0, mode == 4,
                           mode == 5, int(count % nranks)});
        }
    }
  }
  return cases;
}

TEST(DeviceShmCollectives, AroundTheLowLatencyThreshold) {
  constexpr size_t kThreshold = 4096;
  for (int nranks : {2, 5})
    runCases(nranks, aroundTheLowLatencyThreshold(nranks, kThreshold),
             {kChunkBytes, kThreshold});
}

TEST(DeviceShmCollectives, LeavesGroupsTransfersAndDeviceScalars) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(1);
  InProcessOob oob(world, 0);
  DeviceShmCollectives collectives(oob, module, kChunkBytes, 0);
  uint64_t scalar = 0;
  Op op = makeOp(kAllReduceCases[0], nullptr, nullptr, scalar);
  EXPECT_FALSE(collectives.handles({op, op}));
  for (OpKind kind : {OpKind::Send, OpKind::Recv}) {
    Op transfer = op;
    transfer.kind = kind;
    EXPECT_FALSE(collectives.handles({transfer})) << opKindName(kind);
  }
  Op deviceScalar = op;
  deviceScalar.reduce.preMultiply = true;
  deviceScalar.reduce.scalarPointer = &scalar;
  for (OpKind kind :
       {OpKind::AllReduce, OpKind::ReduceScatter, OpKind::Reduce}) {
    deviceScalar.kind = kind;
    EXPECT_FALSE(collectives.handles({deviceScalar})) << opKindName(kind);
  }
}

}  // namespace
}  // namespace hetccl
