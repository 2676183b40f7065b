// The stream-driven GPU all-reduce, run on the emulated device module:
// ranks are threads, their "GPU" streams host streams. Checks the results
// bit for bit against the host engine's reduction in rank order, across
// chunk boundaries, slot reuse, uneven shards and in-place use.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "algo/device_shm_all_reduce.h"
#include "runtime/host/host_reduce.h"
#include "support/emulated_device_module.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

constexpr size_t kChunkBytes = 4096;  // small: many chunks, slots reused

struct Case {
  ncclDataType_t dtype;
  ncclRedOp_t op;
  bool average;
  bool preMultiply;
  size_t count;
  bool inPlace;
};

// Rank r's input: random bits, made finite for floating types so that
// sums stay comparable (NaN payloads are not what this test is about).
std::vector<char> inputOf(const Case& c, int rank) {
  const size_t bytes = c.count * dtypeSize(c.dtype);
  std::vector<char> data(bytes);
  std::mt19937 random(1234 + rank);
  for (char& byte : data) byte = static_cast<char>(random() & 0x3f);
  return data;
}

Op makeOp(const Case& c, const void* send, void* recv, const uint64_t& scalar) {
  Op op;
  op.kind = OpKind::AllReduce;
  op.sendbuff = send;
  op.recvbuff = recv;
  op.count = c.count;
  op.dtype = c.dtype;
  op.reduce.base = c.op;
  op.reduce.average = c.average;
  op.reduce.preMultiply = c.preMultiply;
  op.reduce.scalarValue = scalar;
  return op;
}

std::vector<char> expected(const Case& c, int nranks, uint64_t scalar) {
  std::vector<std::vector<char>> inputs;
  std::vector<const void*> sources;
  for (int r = 0; r < nranks; ++r) inputs.push_back(inputOf(c, r));
  for (auto& input : inputs) sources.push_back(input.data());
  std::vector<char> result(c.count * dtypeSize(c.dtype));
  Reduction reduction{c.dtype, c.op, &scalar, static_cast<uint64_t>(nranks)};
  hostReduce(result.data(), sources.data(), nranks, c.count, reduction,
             c.preMultiply, c.average);
  return result;
}

// Runs every case on `nranks` thread ranks, one launch after another on
// one stream per rank, and checks each rank's outputs.
void runCases(int nranks, const std::vector<Case>& cases,
              size_t chunkBytes = kChunkBytes) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(nranks);
  uint64_t scalar = 0;
  float two = 2.0f;
  runRanks(nranks, [&](int rank) {
    InProcessOob oob(world, rank);
    DeviceShmAllReduce allReduce(oob, module, chunkBytes);
    ASSERT_EQ(allReduce.handles({makeOp(cases[0], nullptr, nullptr, scalar)}),
              true);
    void* stream = nullptr;
    ASSERT_EQ(module.api().streamCreate(&stream), 0);
    std::vector<std::vector<char>> sends, recvs;
    for (const Case& c : cases) {
      sends.push_back(inputOf(c, rank));
      recvs.emplace_back(sends.back().size(), '\x5a');
    }
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      uint64_t caseScalar = 0;
      if (c.dtype == ncclFloat32) std::memcpy(&caseScalar, &two, 4);
      if (c.dtype == ncclInt32) caseScalar = 3;
      void* recv = c.inPlace ? sends[i].data() : recvs[i].data();
      allReduce.launch(makeOp(c, sends[i].data(), recv, caseScalar), stream);
    }
    ASSERT_EQ(module.api().streamSynchronize(stream), 0);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      uint64_t caseScalar = 0;
      if (c.dtype == ncclFloat32) std::memcpy(&caseScalar, &two, 4);
      if (c.dtype == ncclInt32) caseScalar = 3;
      const auto& result = c.inPlace ? sends[i] : recvs[i];
      EXPECT_EQ(result, expected(c, nranks, caseScalar))
          << "rank " << rank << " case " << i << " (" << dtypeName(c.dtype)
          << ", " << c.count << " elements)";
    }
    module.api().streamDestroy(stream);
  });
}

const std::vector<Case> kCases = {
    {ncclFloat32, ncclSum, false, false, 1, false},
    {ncclFloat32, ncclSum, false, false, 7, true},
    {ncclFloat32, ncclSum, false, false, 10001, false},  // ~10 chunks
    {ncclBfloat16, ncclSum, false, false, 5003, true},
    {ncclFloat16, ncclMax, false, false, 4099, false},
    {ncclInt32, ncclProd, false, false, 3000, false},
    {ncclInt64, ncclMin, false, false, 1025, true},
    {ncclFloat32, ncclSum, true, false, 2049, false},  // avg
    {ncclInt32, ncclSum, true, false, 999, false},     // integer avg
    {ncclFloat32, ncclSum, false, true, 3333, false},  // premulsum
    {ncclInt32, ncclSum, false, true, 1111, true},
    {ncclFloat8e4m3, ncclSum, false, false, 9000, false},
    {ncclUint8, ncclMax, false, false, 8191, true},
    {ncclFloat64, ncclSum, false, false, 0, false},
};

TEST(DeviceShmAllReduce, TwoRanks) { runCases(2, kCases); }

TEST(DeviceShmAllReduce, ThreeRanksUnevenShards) { runCases(3, kCases); }

// Ops of fewer than 4 configured chunks are cut into smaller steps (of at
// least 256 KiB), whose boundaries fall elsewhere than the chunks'.
TEST(DeviceShmAllReduce, SmallOpsAreCutIntoPipelineSteps) {
  const std::vector<Case> cases = {
      {ncclFloat32, ncclSum, false, false, 393217, false},  // 4 steps
      {ncclBfloat16, ncclSum, false, false, 300001, true},  // 256 KiB steps
      {ncclFloat32, ncclMax, false, false, 1310723, false},
      {ncclInt64, ncclSum, false, false, 5, false},  // one step
  };
  runCases(2, cases, 4 << 20);
  runCases(3, cases, 4 << 20);
}

TEST(DeviceShmAllReduce, LeavesGroupsAndDeviceScalarsToStaging) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(1);
  InProcessOob oob(world, 0);
  DeviceShmAllReduce allReduce(oob, module, kChunkBytes);
  uint64_t scalar = 0;
  Op op = makeOp(kCases[0], nullptr, nullptr, scalar);
  EXPECT_FALSE(allReduce.handles({op, op}));
  Op broadcast = op;
  broadcast.kind = OpKind::Broadcast;
  EXPECT_FALSE(allReduce.handles({broadcast}));
  Op deviceScalar = op;
  deviceScalar.reduce.preMultiply = true;
  deviceScalar.reduce.scalarPointer = &scalar;
  EXPECT_FALSE(allReduce.handles({deviceScalar}));
}

}  // namespace
}  // namespace hetccl
