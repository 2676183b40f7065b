// GPU ranks of heterogeneous communicators, run on the emulated device
// module: every op staged through host memory (and the all-reduce also on
// the stream-driven path) must give exactly what the host engine gives on
// the same inputs, leave untouched what NCCL leaves untouched, and return
// before the work is done.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "engine/gpu/staged_device_comm.h"
#include "support/emulated_device_module.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"
#include "util/dtype.h"
#include "vendor/host/host_comm.h"
#include "vendor/op_traits.h"

namespace hetccl {
namespace {

constexpr int kRanks = 3;
constexpr size_t kCount = 1001;  // odd, and not a multiple of kRanks
constexpr char kUntouched = '\x5a';

// The host engine's geometry as a communicator with the defaults has it.
ShmSettings hostSettings() {
  return ShmSettings::from(Settings::fromEnvironment());
}

struct Buffers {
  std::vector<char> send;
  std::vector<char> recv;
};

size_t sendElements(OpKind kind) {
  bool perRank = kind == OpKind::ReduceScatter || kind == OpKind::AlltoAll ||
                 kind == OpKind::Scatter;
  return perRank ? kCount * kRanks : kCount;
}

size_t recvElements(OpKind kind) {
  bool perRank = kind == OpKind::AllGather || kind == OpKind::AlltoAll ||
                 kind == OpKind::Gather;
  return perRank ? kCount * kRanks : kCount;
}

Buffers buffersFor(const Op& op, int rank) {
  const size_t e = dtypeSize(op.dtype);
  Buffers b{std::vector<char>(sendElements(op.kind) * e),
            std::vector<char>(recvElements(op.kind) * e, kUntouched)};
  for (size_t i = 0; i < b.send.size(); ++i)
    b.send[i] = static_cast<char>((i * 7 + rank * 13) & 0x3f);
  return b;
}

StreamHandle createStream(const DeviceModule& module) {
  void* stream = nullptr;
  module.check(module.api().streamCreate(&stream), "creating a stream");
  return static_cast<StreamHandle>(stream);
}

Op withBuffers(Op op, Buffers& b) {
  op.sendbuff = b.send.data();
  op.recvbuff = b.recv.data();
  return op;
}

Op makeOp(OpKind kind, ncclDataType_t dtype, int root = 0) {
  Op op;
  op.kind = kind;
  op.count = kCount;
  op.dtype = dtype;
  op.root = root;
  return op;
}

// Each rank runs `ops` (one launch each) through a StagedDeviceComm on
// "device" buffers and again through the host engine on host buffers.
void compareWithHostEngine(const std::vector<Op>& ops, bool direct) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(kRanks);
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    auto abort = std::make_shared<AbortSignal>();
    auto liveness = std::make_shared<PeerLiveness>(kRanks);
    auto hostComm = HostComm::create(oob, hostSettings(), abort, liveness);
    std::unique_ptr<DeviceShmCollectives> directCollectives;
    if (direct)
      directCollectives =
          std::make_unique<DeviceShmCollectives>(oob, module, 4096);
    StagedDeviceComm deviceComm(hostComm, module, 0, rank, kRanks, abort, 30,
                                std::move(directCollectives));
    StreamHandle stream = createStream(module);
    std::vector<Buffers> onDevice, onHost;
    for (const Op& op : ops) {
      onDevice.push_back(buffersFor(op, rank));
      onHost.push_back(buffersFor(op, rank));
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      std::vector<Op> launch = {withBuffers(ops[i], onDevice[i])};
      if (ops[i].kind == OpKind::Send || ops[i].kind == OpKind::Recv)
        continue;  // point-to-point ops go in the group below
      deviceComm.launch(launch, stream);
    }
    ASSERT_EQ(module.api().streamSynchronize(stream), 0);
    for (size_t i = 0; i < ops.size(); ++i)
      hostComm->launch({withBuffers(ops[i], onHost[i])}, nullptr);
    for (size_t i = 0; i < ops.size(); ++i) {
      EXPECT_EQ(onDevice[i].recv, onHost[i].recv)
          << "rank " << rank << ": " << opKindName(ops[i].kind);
      EXPECT_EQ(onDevice[i].send, onHost[i].send)
          << "rank " << rank << ": " << opKindName(ops[i].kind);
    }
    module.api().streamDestroy(stream);
  });
}

std::vector<Op> everyCollective() {
  Op average = makeOp(OpKind::AllReduce, ncclFloat32);
  average.reduce.average = true;
  Op preMultiplied = makeOp(OpKind::ReduceScatter, ncclInt32);
  preMultiplied.reduce.preMultiply = true;
  preMultiplied.reduce.scalarValue = 3;
  return {makeOp(OpKind::AllReduce, ncclBfloat16),
          average,
          makeOp(OpKind::Broadcast, ncclFloat16, 1),
          makeOp(OpKind::Reduce, ncclInt64, 2),
          makeOp(OpKind::AllGather, ncclUint8),
          makeOp(OpKind::ReduceScatter, ncclFloat64),
          preMultiplied,
          makeOp(OpKind::AlltoAll, ncclFloat32),
          makeOp(OpKind::Gather, ncclInt8, 1),
          makeOp(OpKind::Scatter, ncclFloat8e5m2, 2)};
}

TEST(StagedDeviceComm, EveryCollectiveMatchesTheHostEngine) {
  compareWithHostEngine(everyCollective(), false);
}

// The stream-driven kinds take the direct path, the rest staging, in one
// sequence.
TEST(StagedDeviceComm, DirectPathMatchesTheHostEngine) {
  compareWithHostEngine(everyCollective(), true);
}

// Two thread ranks, each with a staged communicator (no direct path) over
// the host engine and a stream of the emulated module.
void runStagedPair(
    const std::function<void(int, StagedDeviceComm&, StreamHandle)>& body) {
  const DeviceModule& module = emulatedDeviceModule();
  InProcessWorld world(2);
  runRanks(2, [&](int rank) {
    InProcessOob oob(world, rank);
    auto abort = std::make_shared<AbortSignal>();
    auto hostComm = HostComm::create(oob, hostSettings(), abort,
                                     std::make_shared<PeerLiveness>(2));
    StagedDeviceComm deviceComm(hostComm, module, 0, rank, 2, abort, 30,
                                nullptr);
    StreamHandle stream = createStream(module);
    body(rank, deviceComm, stream);
    module.api().streamDestroy(stream);
  });
}

TEST(StagedDeviceComm, NonRootReduceOutputStaysUntouched) {
  runStagedPair(
      [](int rank, StagedDeviceComm& deviceComm, StreamHandle stream) {
        const DeviceModule& module = emulatedDeviceModule();
        Op reduce = makeOp(OpKind::Reduce, ncclFloat32, 0);
        Buffers b = buffersFor(reduce, rank);
        deviceComm.launch({withBuffers(reduce, b)}, stream);
        ASSERT_EQ(module.api().streamSynchronize(stream), 0);
        if (rank == 1)
          EXPECT_EQ(b.recv, std::vector<char>(b.recv.size(), kUntouched));
        else
          EXPECT_NE(b.recv, std::vector<char>(b.recv.size(), kUntouched));
      });
}

TEST(StagedDeviceComm, PointToPointGroupsAreStaged) {
  runStagedPair(
      [](int rank, StagedDeviceComm& deviceComm, StreamHandle stream) {
        const DeviceModule& module = emulatedDeviceModule();
        std::vector<int32_t> out(777, rank + 1), in(777, -1);
        Op send = makeOp(OpKind::Send, ncclInt32, 1 - rank);
        send.count = out.size();
        send.sendbuff = out.data();
        Op recv = makeOp(OpKind::Recv, ncclInt32, 1 - rank);
        recv.count = in.size();
        recv.recvbuff = in.data();
        deviceComm.launch({send, recv}, stream);
        ASSERT_EQ(module.api().streamSynchronize(stream), 0);
        EXPECT_EQ(in, std::vector<int32_t>(777, 2 - rank));
      });
}

// The launch only enqueues: with the stream held back by a counter that
// nobody has written yet, it still returns, and the work runs once the
// counter is written.
TEST(StagedDeviceComm, LaunchReturnsBeforeTheWorkRuns) {
  runStagedPair(
      [](int rank, StagedDeviceComm& deviceComm, StreamHandle stream) {
        const DeviceModule& module = emulatedDeviceModule();
        uint64_t gate = 0;
        ASSERT_EQ(module.api().waitValue64(stream, &gate, 1), 0);
        Op allReduce = makeOp(OpKind::AllReduce, ncclFloat32);
        Buffers b = buffersFor(allReduce, rank);
        deviceComm.launch({withBuffers(allReduce, b)}, stream);
        int idle = 1;
        ASSERT_EQ(module.api().streamQuery(stream, &idle), 0);
        EXPECT_EQ(idle, 0);
        EXPECT_EQ(b.recv, std::vector<char>(b.recv.size(), kUntouched));
        __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
        ASSERT_EQ(module.api().streamSynchronize(stream), 0);
        EXPECT_NE(b.recv, std::vector<char>(b.recv.size(), kUntouched));
      });
}

}  // namespace
}  // namespace hetccl
