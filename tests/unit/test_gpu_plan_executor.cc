// The GPU engine on the emulated device module, with the host collectives
// standing in for the domains' vendor library (on the emulated module's
// streams, which are host streams, it runs in stream order as NCCL's
// kernels would): every collective and point-to-point
// group, on uneven domains and over shm and tcp links, must give bitwise
// what the host plans give on the same inputs and domains, leave
// untouched what NCCL leaves untouched, return before the work is done,
// and let the caller's stream go when the communicator is aborted.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "domain/host/host_comm.h"
#include "engine/gpu/plan/gpu_plan_executor.h"
#include "engine/gpu/stream_driven_executor.h"
#include "engine/host/host_plan_executor.h"
#include "op/op_traits.h"
#include "runtime/host/emulated_device_module.h"
#include "runtime/host/host_runtime.h"
#include "support/in_process_oob.h"
#include "support/scoped_env.h"
#include "support/thread_ranks.h"
#include "util/dtype.h"

namespace hetccl {
namespace {

constexpr size_t kCount = 1001;  // odd, and not a multiple of any domain
constexpr char kUntouched = '\x5a';

struct Buffers {
  std::vector<char> send;
  std::vector<char> recv;
};

size_t sendElements(OpKind kind, int nranks) {
  bool perRank = kind == OpKind::ReduceScatter || kind == OpKind::AlltoAll ||
                 kind == OpKind::Scatter;
  return perRank ? kCount * nranks : kCount;
}

size_t recvElements(OpKind kind, int nranks) {
  bool perRank = kind == OpKind::AllGather || kind == OpKind::AlltoAll ||
                 kind == OpKind::Gather;
  return perRank ? kCount * nranks : kCount;
}

Buffers buffersFor(const Op& op, int rank, int nranks) {
  const size_t e = dtypeSize(op.dtype);
  Buffers b{std::vector<char>(sendElements(op.kind, nranks) * e),
            std::vector<char>(recvElements(op.kind, nranks) * e, kUntouched)};
  for (size_t i = 0; i < b.send.size(); ++i)
    b.send[i] = static_cast<char>((i * 7 + rank * 13) & 0x3f);
  return b;
}

Op withBuffers(Op op, Buffers& b) {
  op.sendbuff = b.send.data();
  op.recvbuff = b.recv.data();
  return op;
}

// In place, as NCCL defines it: one buffer, the rank's block of the larger
// side being the smaller side (the input of all-gather and gather, the
// output of reduce-scatter and scatter), the same buffer otherwise.
Op inPlace(Op op, Buffers& b, int rank) {
  const size_t block = op.count * dtypeSize(op.dtype);
  b.recv =
      b.send.size() > b.recv.size() ? b.send : std::vector<char>(b.recv.size());
  for (size_t i = 0; i < b.recv.size(); ++i)
    b.recv[i] = static_cast<char>((i * 5 + rank * 11) & 0x3f);
  b.send.clear();
  char* data = b.recv.data();
  op.sendbuff = op.recvbuff = data;
  switch (op.kind) {
    case OpKind::AllGather:
    case OpKind::Gather:
      op.sendbuff = data + rank * block;
      break;
    case OpKind::ReduceScatter:
    case OpKind::Scatter:
      op.recvbuff = data + rank * block;
      break;
    default:
      break;
  }
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

// One rank's engine, and the host plans over the same domains, links and
// domain communicator for reference.
struct EngineRank {
  int rank;
  int nranks;
  Executor& engine;
  HostPlanExecutor& hostPlans;
  StreamHandle stream;      // an emulated device stream
  StreamHandle hostStream;  // a host runtime stream
  AbortSignal& abort;
  const CrossDomainLinks& links;
};

struct Layout {
  std::vector<int> labels;  // domain label per rank
  std::string transport = "shm";
  bool streamDriven = false;             // with DeviceShmCollectives
  const DeviceModule* module = nullptr;  // the emulated module if null
  bool timeline = false;                 // HETCCL_ENGINE_TIMELINE
  int device = 0;  // of the emulated module, current while it is built
  size_t lowLatencyMaxBytes = 0;  // HETCCL_GPU_LL_MAX (streamDriven)
  // HETCCL_STAGED_LL_MAX where set (its default otherwise).
  std::optional<size_t> stagedLowLatencyMaxBytes = std::nullopt;
  size_t chunkBytes = 1024;  // several pipeline steps per op
  // HETCCL_STAGED_COPY_PIECES where set (its default otherwise).
  std::optional<size_t> stagedCopyPieces = std::nullopt;
  // HETCCL_STAGED_RUNS_FROM (0: runs whatever the staging streams' lag).
  uint64_t stagedRunsFrom = 0;
  size_t stagingStreams = 1;  // HETCCL_STAGING_STREAMS
};

void runEngineRanks(const Layout& layout,
                    const std::function<void(EngineRank&)>& body) {
  const DeviceModule& module =
      layout.module ? *layout.module : emulatedDeviceModule();
  const int nranks = static_cast<int>(layout.labels.size());
  std::vector<RankPlacement> placements;
  for (int label : layout.labels)
    placements.push_back({static_cast<int>(RuntimeKind::Cuda), label, 1});
  const DomainMap domains(placements);
  InProcessWorld world(nranks);
  std::vector<std::unique_ptr<InProcessWorld>> domainWorlds;
  for (int d = 0; d < domains.count(); ++d)
    domainWorlds.push_back(std::make_unique<InProcessWorld>(
        static_cast<int>(domains.members(d).size())));
  runRanks(nranks, [&](int rank) {
    InProcessOob oob(world, rank);
    const std::vector<int>& members = domains.members(domains.domainOf(rank));
    InProcessOob domainOob(*domainWorlds[domains.domainOf(rank)],
                           domains.localRank(rank));
    TransportSettings transports = TransportSettings::fromEnvironment();
    transports.selection = layout.transport;
    PlanSettings plans = PlanSettings::fromEnvironment();
    plans.chunkBytes = layout.chunkBytes;
    GpuEngineSettings engineSettings = GpuEngineSettings::fromEnvironment();
    if (layout.stagedLowLatencyMaxBytes)
      engineSettings.stagedLowLatencyMaxBytes =
          *layout.stagedLowLatencyMaxBytes;
    if (layout.stagedCopyPieces)
      engineSettings.stagedCopyPieces = *layout.stagedCopyPieces;
    engineSettings.stagedRunsFrom = layout.stagedRunsFrom;
    engineSettings.stagingStreams = layout.stagingStreams;
    plans.timeline = layout.timeline;
    constexpr double kTimeoutSeconds = 60;
    auto abort = std::make_shared<AbortSignal>();
    auto liveness = std::make_shared<PeerLiveness>(nranks);
    auto hostComm =
        HostComm::create(domainOob, ShmSettings::fromEnvironment(),
                         kTimeoutSeconds, abort, liveness->subset(members));
    auto links = std::make_shared<CrossDomainLinks>(oob, placements, domains,
                                                    transports, kTimeoutSeconds,
                                                    plans, abort, liveness);
    auto hostPlans = HostPlanExecutor::create(rank, domains, links, plans,
                                              kTimeoutSeconds, hostComm, abort);
    ASSERT_EQ(module.api().setDevice(layout.device), 0);
    void* stream = nullptr;
    ASSERT_EQ(module.api().streamCreate(&stream), 0);
    {
      GpuPlanExecutorSetup setup{
          module,   layout.device, rank,           domains,         links,
          hostComm, plans,         engineSettings, kTimeoutSeconds, abort};
      std::unique_ptr<Executor> executor;
      if (layout.streamDriven) {
        auto direct = std::make_unique<DeviceShmCollectives>(
            oob, module, 4096, layout.lowLatencyMaxBytes);
        setup.onFailure = StreamDrivenExecutor::outboxesFailure(*direct);
        executor = std::make_unique<StreamDrivenExecutor>(
            StreamDrivenSetup{module,
                              layout.device,
                              rank,
                              nranks,
                              kTimeoutSeconds,
                              abort,
                              std::move(direct),
                              liveness,
                              {}},
            std::make_unique<GpuPlanExecutor>(std::move(setup)));
      } else {
        executor = std::make_unique<GpuPlanExecutor>(std::move(setup));
      }
      Executor& engine = *executor;
      StreamHandle hostStream = hostRuntimeImpl().createStream();
      EngineRank self{rank,
                      nranks,
                      engine,
                      *hostPlans,
                      static_cast<StreamHandle>(stream),
                      hostStream,
                      *abort,
                      *links};
      body(self);
      hostRuntimeImpl().destroyStream(hostStream);
    }
    module.api().streamDestroy(stream);
  });
}

// Each op once on "device" buffers through the engine (the point-to-point
// ops as one group), then on host buffers through the host plans.
void compareWithHostPlans(const Layout& layout, const std::vector<Op>& ops,
                          bool inPlaceBuffers = false) {
  runEngineRanks(layout, [&](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    std::vector<Buffers> onDevice, onHost;
    std::vector<Op> deviceOps, hostOps, group, hostGroup;
    for (const Op& op : ops) {
      onDevice.push_back(buffersFor(op, r.rank, r.nranks));
      onHost.push_back(buffersFor(op, r.rank, r.nranks));
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      bool asked = inPlaceBuffers && !isPointToPoint(ops[i].kind);
      deviceOps.push_back(asked ? inPlace(ops[i], onDevice[i], r.rank)
                                : withBuffers(ops[i], onDevice[i]));
      hostOps.push_back(asked ? inPlace(ops[i], onHost[i], r.rank)
                              : withBuffers(ops[i], onHost[i]));
    }
    // One after the other: both run over the same links.
    for (size_t i = 0; i < ops.size(); ++i) {
      if (isPointToPoint(ops[i].kind)) {
        group.push_back(deviceOps[i]);
        hostGroup.push_back(hostOps[i]);
      } else {
        r.engine.launch({deviceOps[i]}, r.stream);
      }
    }
    if (!group.empty()) r.engine.launch(group, r.stream);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    const size_t engineSent = r.links.bytesSent();
    const size_t engineReceived = r.links.bytesReceived();
    for (size_t i = 0; i < ops.size(); ++i)
      if (!isPointToPoint(ops[i].kind))
        r.hostPlans.launch({hostOps[i]}, r.hostStream);
    if (!hostGroup.empty()) r.hostPlans.launch(hostGroup, r.hostStream);
    hostRuntimeImpl().synchronize(r.hostStream);
    // Staging moves exactly what the plans send: the host plans' minimum
    // (the stream-driven path does not use the links).
    if (!layout.streamDriven) {
      EXPECT_EQ(engineSent, r.links.bytesSent() - engineSent)
          << "rank " << r.rank;
      EXPECT_EQ(engineReceived, r.links.bytesReceived() - engineReceived)
          << "rank " << r.rank;
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      EXPECT_EQ(onDevice[i].recv, onHost[i].recv)
          << "rank " << r.rank << ": " << opKindName(ops[i].kind);
      EXPECT_EQ(onDevice[i].send, onHost[i].send)
          << "rank " << r.rank << ": " << opKindName(ops[i].kind);
    }
  });
}

std::vector<Op> everyCollective(int nranks) {
  Op average = makeOp(OpKind::AllReduce, ncclFloat32);
  average.reduce.average = true;
  Op preMultiplied = makeOp(OpKind::ReduceScatter, ncclInt32);
  preMultiplied.reduce.preMultiply = true;
  preMultiplied.reduce.scalarValue = 3;
  // fp8 PreMulSum: NCCL's one-rank communicators lack it, which ranks
  // alone in their domain must not depend on.
  Op fp8PreMultiplied = makeOp(OpKind::AllReduce, ncclFloat8e4m3);
  fp8PreMultiplied.reduce.preMultiply = true;
  fp8PreMultiplied.reduce.scalarValue = 0x40;  // 2.0
  Op empty = makeOp(OpKind::AllReduce, ncclFloat16);
  empty.count = 0;
  return {makeOp(OpKind::AllReduce, ncclBfloat16),
          average,
          fp8PreMultiplied,
          empty,
          makeOp(OpKind::Broadcast, ncclFloat16, 1),
          makeOp(OpKind::Reduce, ncclInt64, nranks - 1),
          makeOp(OpKind::AllGather, ncclUint8),
          makeOp(OpKind::ReduceScatter, ncclFloat64),
          preMultiplied,
          makeOp(OpKind::AlltoAll, ncclFloat32),
          makeOp(OpKind::Gather, ncclInt8, 1),
          makeOp(OpKind::Scatter, ncclFloat8e5m2, nranks - 1)};
}

// Every rank sends to the next and receives from the one before, in a
// group: across domains and inside them.
std::vector<Op> ringExchange(int rank, int nranks) {
  Op send = makeOp(OpKind::Send, ncclInt32, (rank + 1) % nranks);
  Op recv = makeOp(OpKind::Recv, ncclInt32, (rank + nranks - 1) % nranks);
  return {recv, send};  // posted in the order that deadlocks a naive send
}

TEST(GpuPlanExecutor, EveryCollectiveMatchesTheHostPlansOnUnevenDomains) {
  compareWithHostPlans({{0, 0, 1, 1, 1}}, everyCollective(5));
}

TEST(GpuPlanExecutor, EveryCollectiveInPlaceMatchesTheHostPlans) {
  compareWithHostPlans({{0, 0, 1, 1}, "tcp"}, everyCollective(4), true);
  compareWithHostPlans({{0, 0, 1, 1, 1}}, everyCollective(5), true);
}

TEST(GpuPlanExecutor, EveryCollectiveMatchesTheHostPlansOverTcp) {
  compareWithHostPlans({{0, 1, 1, 0}, "tcp"}, everyCollective(4));
}

// Between 2 domains whose links combine on receive (a CPU rank's shm and
// tcp links), the host plans' reduce-scatter and all-reduce take no
// scratch for the partials that arrive: ranks alone in their domain, whose
// partial is their input, hold none. A rank of 2 whose domain meets one
// rank lays its input out and holds scratch. (The one-shot plans, for
// small messages, keep theirs.)
TEST(GpuPlanExecutor, HostPlansCombiningOnReceiveHoldNoPartialsScratch) {
  ScopedEnv pipelined("HETCCL_ONE_SHOT_MAX", "0");
  const std::vector<Op> reductions = {
      makeOp(OpKind::ReduceScatter, ncclFloat32),
      makeOp(OpKind::AllReduce, ncclFloat32)};
  const auto scratchOf = [&](const Layout& layout) {
    std::vector<size_t> held(layout.labels.size());
    runEngineRanks(layout, [&](EngineRank& r) {
      std::vector<Buffers> buffers;
      for (const Op& op : reductions)
        buffers.push_back(buffersFor(op, r.rank, r.nranks));
      for (size_t i = 0; i < reductions.size(); ++i)
        r.hostPlans.launch({withBuffers(reductions[i], buffers[i])},
                           r.hostStream);
      hostRuntimeImpl().synchronize(r.hostStream);
      ASSERT_FALSE(r.abort.raised()) << r.abort.reason();
      held[r.rank] = r.hostPlans.scratchHeld();
    });
    return held;
  };
  EXPECT_EQ(scratchOf({{0, 1}}), std::vector<size_t>(2, 0));
  EXPECT_EQ(scratchOf({{0, 1}, "tcp"}), std::vector<size_t>(2, 0));
  const std::vector<size_t> uneven = scratchOf({{0, 0, 1}});
  EXPECT_GT(uneven[0], 0u);
  EXPECT_GT(uneven[1], 0u);
}

// Transfers taking three pairs of staging streams in turn compute what
// the host plans do: every piece through them, and small pieces copied by
// kernels on the engine's stream among them.
TEST(GpuPlanExecutor, EveryCollectiveOverSeveralStagingStreams) {
  for (std::optional<size_t> cutOff :
       {std::optional<size_t>(0), std::optional<size_t>()}) {
    Layout layout{{0, 1, 1, 0}, "tcp"};
    layout.stagingStreams = 3;
    layout.stagedLowLatencyMaxBytes = cutOff;
    compareWithHostPlans(layout, everyCollective(4));
  }
}

// Timing the engine's stream changes what it enqueues (events between the
// steps), not what the plans compute.
TEST(GpuPlanExecutor, EveryCollectiveWithTheTimelineOn) {
  Layout layout{{0, 0, 1, 1, 1}, "tcp"};
  layout.timeline = true;
  compareWithHostPlans(layout, everyCollective(5));
}

// A rank alone in its domain runs its domain steps itself (copies, and
// the scaling of PreMulSum).
TEST(GpuPlanExecutor, EveryCollectiveWithARankAloneInItsDomain) {
  compareWithHostPlans({{0, 1, 1}, "tcp"}, everyCollective(3));
  compareWithHostPlans({{0, 1, 1}, "tcp"}, everyCollective(3), true);
  compareWithHostPlans({{0, 1}}, everyCollective(2));
}

TEST(GpuPlanExecutor, PointToPointGroupsAcrossAndInsideDomains) {
  runEngineRanks({{0, 0, 1, 1, 1}}, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    std::vector<int32_t> out(777, r.rank + 1), in(777, -1);
    std::vector<Op> ops = ringExchange(r.rank, r.nranks);
    ops[0].count = ops[1].count = out.size();
    ops[0].recvbuff = in.data();
    ops[1].sendbuff = out.data();
    r.engine.launch(ops, r.stream);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    int from = (r.rank + r.nranks - 1) % r.nranks;
    EXPECT_EQ(in, std::vector<int32_t>(777, from + 1));
  });
}

// Transfers around the cut-off of the kernel copies (HETCCL_STAGED_LL_MAX,
// 1 KiB here; pieces of 4 KiB) between two ranks, all in one group each
// way: below, at and above it; more small ones than a ring has slots; then
// staged ones, and a small one after them. So each lane takes kernels and
// then staging streams in one launch, and a lane with a staged piece no
// more kernels. Three launches in a row, the rings' pieces numbered on
// across them, each checked before the next refills the buffers.
std::atomic<int> stagedCopies{0};

// One group between two ranks: a send of each of `sizes` to the peer and
// a receive of as many from it, the bytes telling rank, round and place.
class PeerExchange {
 public:
  PeerExchange(int rank, const std::vector<size_t>& sizes, int round)
      : rank_(rank), round_(round) {
    for (size_t t = 0; t < sizes.size(); ++t) {
      out_.emplace_back(sizes[t]);
      in_.emplace_back(sizes[t], uint8_t(kUntouched));
      for (size_t i = 0; i < sizes[t]; ++i) out_[t][i] = byteOf(rank, t, i);
      Op recv = makeOp(OpKind::Recv, ncclUint8, peer());
      Op send = makeOp(OpKind::Send, ncclUint8, peer());
      recv.count = send.count = sizes[t];
      recv.recvbuff = in_[t].data();
      send.sendbuff = out_[t].data();
      group_.push_back(recv);
      group_.push_back(send);
    }
  }

  const std::vector<Op>& group() const { return group_; }

  // Once the group's launch is done: every byte from the peer arrived.
  void check() const {
    for (size_t t = 0; t < in_.size(); ++t)
      for (size_t i = 0; i < in_[t].size(); ++i)
        ASSERT_EQ(in_[t][i], byteOf(peer(), t, i))
            << "rank " << rank_ << ", round " << round_ << ", transfer " << t
            << " of " << in_[t].size() << " bytes, byte " << i;
  }

 private:
  int peer() const { return 1 - rank_; }
  uint8_t byteOf(int rank, size_t transfer, size_t i) const {
    return static_cast<uint8_t>(rank * 101 + round_ * 31 + transfer * 7 + i);
  }

  const int rank_;
  const int round_;
  std::vector<std::vector<uint8_t>> out_, in_;
  std::vector<Op> group_;
};

// Rank r and 1 - r send each other transfers of `sizes` in one group,
// every byte checked; `round` varies the bytes from call to call.
void exchangeWithPeer(EngineRank& r, const std::vector<size_t>& sizes,
                      int round) {
  const PeerExchange exchange(r.rank, sizes, round);
  r.engine.launch(exchange.group(), r.stream);
  ASSERT_EQ(emulatedDeviceModule().api().streamSynchronize(r.stream), 0);
  exchange.check();
}

// The emulated module, counting its staged copies.
const DeviceModule& countingModule() {
  static const hetcclDeviceModuleTable counting = [] {
    hetcclDeviceModuleTable table = emulatedDeviceModule().api();
    table.stagedCopy = [](const hetcclDeviceStagedCopy* copy, void* stream) {
      ++stagedCopies;
      return emulatedDeviceModule().api().stagedCopy(copy, stream);
    };
    return table;
  }();
  static const DeviceModule module(counting, "counting emulated module");
  return module;
}

// Transfers around the cut-off of the kernel copies (HETCCL_STAGED_LL_MAX,
// 1 KiB here) between two ranks, each launch one group both ways. The
// group posts its transfers in rounds of pieces of at most 1 KiB (the
// chunk here) and waits for a round after posting the next, so each lane
// takes kernels for its first 8 pieces (a ring's slots) and the staging
// streams after that; a staged receive's copy waits on the staging stream
// for the kernels of the receives before it, which its wait enqueues:
// - A (1, 1023 and 1024 bytes six times): 8 pieces each way;
// - B (1024 twice, 1025, 9000, 100, 1): 8 pieces each way by kernel over
//   rounds 0 and 1, round 1's receive kernels enqueued only when round
//   2's staged receive is waited for;
// - C (1, 1023, 1024 seven times, 7): one round of 10 pieces each way,
//   the last two staged.
// Three rounds, the rings' pieces numbered on across launches, each
// launch checked before the next refills its buffers; 16 kernel copies
// per launch and rank.
TEST(GpuPlanExecutor, StagedTransfersAroundTheKernelCopyCutOff) {
  Layout layout{{0, 1}, "tcp"};
  layout.stagedLowLatencyMaxBytes = 1024;
  layout.module = &countingModule();
  stagedCopies = 0;
  std::vector<size_t> allKernels = {1, 1023};
  allKernels.insert(allKernels.end(), 6, 1024);
  const std::vector<size_t> mixed = {1024, 1024, 1025, 9000, 100, 1};
  std::vector<size_t> pastTheSlots = allKernels;
  pastTheSlots.insert(pastTheSlots.end(), {1024, 7});
  const std::vector<std::vector<size_t>> launches = {allKernels, mixed,
                                                     pastTheSlots};
  runEngineRanks(layout, [&](EngineRank& r) {
    for (int round = 0; round < 3; ++round)
      for (const std::vector<size_t>& sizes : launches)
        exchangeWithPeer(r, sizes, round);
  });
  EXPECT_EQ(stagedCopies.load(), 2 * 3 * 3 * 16);
}

std::atomic<int> copies{0};
std::atomic<int> copies2D{0};

// The emulated module, counting its plain and 2D copies.
const DeviceModule& copyCountingModule() {
  static const hetcclDeviceModuleTable counting = [] {
    hetcclDeviceModuleTable table = emulatedDeviceModule().api();
    table.copyAsync = [](void* dst, const void* src, size_t bytes,
                         void* stream) {
      ++copies;
      return emulatedDeviceModule().api().copyAsync(dst, src, bytes, stream);
    };
    table.copy2DAsync = [](void* dst, size_t dpitch, const void* src,
                           size_t spitch, size_t width, size_t height,
                           void* stream) {
      ++copies2D;
      return emulatedDeviceModule().api().copy2DAsync(dst, dpitch, src, spitch,
                                                      width, height, stream);
    };
    return table;
  }();
  static const DeviceModule module(counting, "copy-counting emulated module");
  return module;
}

// A staging copy takes a run of pieces whose slots follow each other
// (slot_runs.h; no kernel copies): a send/recv of 2 MB in 2 MB chunks goes
// as two transfers of 1 MB each way, each of 4 pieces of 256 KiB, so the
// sender copies pieces 0 and 1-3 of each and the receiver 0-2 and 3, 2
// copies per transfer instead of 4; the next launch's pieces take the
// same slots again.
TEST(GpuPlanExecutor, AStagingCopyTakesARunOfPieces) {
  for (size_t perCopy : {1, 4}) {
    Layout layout{{0, 1}, "tcp"};
    layout.module = &copyCountingModule();
    layout.chunkBytes = 2 << 20;
    layout.stagedLowLatencyMaxBytes = 0;
    layout.stagedCopyPieces = perCopy;
    copies = 0;
    runEngineRanks(layout, [&](EngineRank& r) {
      for (int round = 0; round < 2; ++round)
        exchangeWithPeer(r, {(2 << 20) - 5}, round);
    });
    const int perTransfer = perCopy == 1 ? 4 : 2;
    const int transfers = 2 * 2 * 2 * 2;  // ranks, launches, halves, ways
    EXPECT_EQ(copies.load(), transfers * perTransfer) << perCopy << " per copy";
  }
}

// Runs only once a staging stream lags (HETCCL_STAGED_RUNS_FROM): each
// rank's stream waits for a word of the test's while two launches of the
// exchange above are enqueued behind it (each 2 transfers of 4 pieces each
// way), so no staging copy has run by then. From 8 pieces waiting the
// second launch's transfers go in runs (2 copies each), the first's a
// piece at a time: 4 + 4 + 2 + 2 copies each way per rank. From 0 every
// transfer goes in runs, from 2^20 none.
TEST(GpuPlanExecutor, RunsOnlyOnceTheStagingStreamLags) {
  const std::vector<std::pair<uint64_t, int>> copiesPerRank = {
      {0, 16}, {8, 24}, {1 << 20, 32}};
  for (const auto& [runsFrom, perRank] : copiesPerRank) {
    Layout layout{{0, 1}, "tcp"};
    layout.module = &copyCountingModule();
    layout.chunkBytes = 2 << 20;
    layout.stagedLowLatencyMaxBytes = 0;
    layout.stagedCopyPieces = 4;
    layout.stagedRunsFrom = runsFrom;
    copies = 0;
    runEngineRanks(layout, [&](EngineRank& r) {
      const auto& api = emulatedDeviceModule().api();
      uint64_t gate = 0;
      ASSERT_EQ(api.waitValue64(r.stream, &gate, 1), 0);
      const PeerExchange first(r.rank, {(2 << 20) - 5}, 0);
      const PeerExchange second(r.rank, {(2 << 20) - 5}, 1);
      r.engine.launch(first.group(), r.stream);
      r.engine.launch(second.group(), r.stream);
      __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
      ASSERT_EQ(api.streamSynchronize(r.stream), 0);
      first.check();
      second.check();
    });
    EXPECT_EQ(copies.load(), 2 * perRank) << "runs from " << runsFrom;
  }
}

// Transfers of 1 to 4 pieces (2 MB chunks: a transfer of 1 MB at most,
// pieces of 256 KiB), with short last pieces, in one group each way: the
// group posts a piece of each transfer per round, so runs start at every
// slot and the rings wrap inside them, at every setting; every byte
// checked, three launches in a row.
TEST(GpuPlanExecutor, StagedTransfersInRunsOfEveryLength) {
  constexpr size_t kMiB = 1 << 20;
  const std::vector<size_t> sizes = {
      2 * kMiB + 1,    3, 700 << 10, kMiB, (256 << 10) - 1, 5 * kMiB + 3,
      kMiB * 3 / 2 - 7};
  for (size_t perCopy : {1, 2, 3, 4}) {
    Layout layout{{0, 1}, "tcp"};
    layout.chunkBytes = 2 * kMiB;
    layout.stagedCopyPieces = perCopy;
    runEngineRanks(layout, [&](EngineRank& r) {
      for (int round = 0; round < 3; ++round) exchangeWithPeer(r, sizes, round);
    });
  }
}

// Several pairs of staging streams, taken by transfers in turn: the same
// transfers as above (runs of 1 to 4 pieces, rings wrapping inside
// launches), over 2 to 4 pairs, a piece per copy and in runs; every byte
// checked.
TEST(GpuPlanExecutor, StagedTransfersOverSeveralStagingStreams) {
  constexpr size_t kMiB = 1 << 20;
  const std::vector<size_t> sizes = {
      2 * kMiB + 1,    3, 700 << 10, kMiB, (256 << 10) - 1, 5 * kMiB + 3,
      kMiB * 3 / 2 - 7};
  const std::vector<std::pair<size_t, size_t>> pairsAndPiecesPerCopy = {
      {2, 1}, {3, 4}, {4, 1}};
  for (const auto& [pairs, perCopy] : pairsAndPiecesPerCopy) {
    SCOPED_TRACE(testing::Message()
                 << pairs << " pairs, " << perCopy << " pieces per copy");
    Layout layout{{0, 1}, "tcp"};
    layout.chunkBytes = 2 * kMiB;
    layout.stagedCopyPieces = perCopy;
    layout.stagingStreams = pairs;
    runEngineRanks(layout, [&](EngineRank& r) {
      for (int round = 0; round < 3; ++round) exchangeWithPeer(r, sizes, round);
    });
  }
}

// Slots larger than the pieces: rank 0 broadcasts 2 MB (2 MB chunks,
// pieces of 512 KiB), which pins its send ring's slots and rank 1's
// receive ring's at 512 KiB; then each sends the other 2 MB as two
// transfers of 1 MB in pieces of 256 KiB, half a slot each on those two
// rings. Each such transfer's run of 3 is a 2D copy, a row per slot (2
// transfers a launch, on each of the two rings, 2 launches: 8); the
// other two rings' slots are 256 KiB, and their runs plain copies. Every
// byte arrives.
TEST(GpuPlanExecutor, RunsInSlotsLargerThanTheirPieces) {
  constexpr size_t kMiB = 1 << 20;
  for (size_t perCopy : {1, 4}) {
    Layout layout{{0, 1}, "tcp"};
    layout.module = &copyCountingModule();
    layout.chunkBytes = 2 * kMiB;
    layout.stagedLowLatencyMaxBytes = 0;
    layout.stagedCopyPieces = perCopy;
    copies2D = 0;
    runEngineRanks(layout, [&](EngineRank& r) {
      Op broadcast = makeOp(OpKind::Broadcast, ncclUint8, 0);
      broadcast.count = 2 * kMiB;
      std::vector<uint8_t> data(broadcast.count, uint8_t(r.rank == 0 ? 7 : 0));
      broadcast.sendbuff = broadcast.recvbuff = data.data();
      r.engine.launch({broadcast}, r.stream);
      ASSERT_EQ(emulatedDeviceModule().api().streamSynchronize(r.stream), 0);
      EXPECT_EQ(data, std::vector<uint8_t>(data.size(), 7));
      for (int round = 0; round < 2; ++round)
        exchangeWithPeer(r, {2 * kMiB}, round);
    });
    EXPECT_EQ(copies2D.load(), perCopy == 1 ? 0 : 8) << perCopy << " per copy";
  }
}

// A link's staging rings are pinned as large as the pieces they took
// (slot_sizes.h; 64 KiB chunks here, so pieces of at most 16 KiB): three
// transfers of 100 bytes each way pin a ring of 8 pages each way. Larger
// transfers, 13 pieces each way in one group, grow the rings twice while
// earlier pieces in their former slots are still in flight, with the
// kernel copies and without; the same group again pins nothing more.
TEST(GpuPlanExecutor, StagingSlotsArePinnedAsTheirPiecesNeed) {
  for (std::optional<size_t> cutOff :
       {std::optional<size_t>(0), std::optional<size_t>()}) {
    Layout layout{{0, 1}, "tcp"};
    layout.chunkBytes = 64 << 10;
    layout.stagedLowLatencyMaxBytes = cutOff;
    runEngineRanks(layout, [&](EngineRank& r) {
      auto& engine = dynamic_cast<GpuPlanExecutor&>(r.engine);
      exchangeWithPeer(r, {100, 100, 100}, 0);
      EXPECT_EQ(engine.stagingPinnedBytes(), 2 * kStagingRingSlots * 4096u);
      const std::vector<size_t> growing = {5000,  16384, 40000, 3,
                                           70000, 100,   9000};
      exchangeWithPeer(r, growing, 1);
      // Slots of 8 and 16 KiB beside the first ones, each way.
      const size_t pinned = engine.stagingPinnedBytes();
      EXPECT_EQ(pinned, 2 * kStagingRingSlots * (4096u + 8192 + 16384));
      exchangeWithPeer(r, growing, 2);
      EXPECT_EQ(engine.stagingPinnedBytes(), pinned);
    });
  }
}

// Every collective with the kernel copies off, and with every transfer of
// a piece taking them.
TEST(GpuPlanExecutor, EveryCollectiveWithAndWithoutKernelCopies) {
  for (size_t cutOff : {size_t{0}, size_t{1} << 20}) {
    Layout layout{{0, 1, 1}, "tcp"};
    layout.stagedLowLatencyMaxBytes = cutOff;
    compareWithHostPlans(layout, everyCollective(3));
  }
}

// One rank per domain on one host: the stream-driven collectives and the
// engine in one sequence.
TEST(GpuPlanExecutor, StreamDrivenPathAndEngineInOneSequence) {
  compareWithHostPlans({{0, 1, 2}, "shm", true}, everyCollective(3));
}

// A group of sends, receives and collectives on the stream-driven layout:
// the transfers go through the outboxes' channels, the two collectives
// (more than that path takes at once) through the engine.
TEST(GpuPlanExecutor, StreamDrivenTransfersInAGroupWithCollectives) {
  runEngineRanks({{0, 1, 2}, "shm", true}, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    std::vector<int32_t> out(70001, r.rank + 1), in(70001, -1);
    std::vector<int32_t> sums(kCount, r.rank + 1), gathered(kCount * r.nranks);
    std::vector<Op> group = ringExchange(r.rank, r.nranks);
    group[0].count = group[1].count = out.size();
    group[0].recvbuff = in.data();
    group[1].sendbuff = out.data();
    Op allReduce = makeOp(OpKind::AllReduce, ncclInt32);
    allReduce.sendbuff = allReduce.recvbuff = sums.data();
    Op allGather = makeOp(OpKind::AllGather, ncclInt32);
    allGather.sendbuff = out.data();
    allGather.recvbuff = gathered.data();
    group.insert(group.begin() + 1, allReduce);
    group.push_back(allGather);
    r.engine.launch(group, r.stream);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    const int from = (r.rank + r.nranks - 1) % r.nranks;
    EXPECT_EQ(in, std::vector<int32_t>(out.size(), from + 1));
    EXPECT_EQ(sums, std::vector<int32_t>(kCount, 6));
    for (int p = 0; p < r.nranks; ++p)
      EXPECT_EQ(gathered[p * kCount + kCount - 1], p + 1) << "part " << p;
  });
}

// Integer sums are exact: the all-reduce is checked against the sum itself.
TEST(GpuPlanExecutor, AllReduceGivesTheSumOnEveryRank) {
  runEngineRanks({{0, 0, 1, 1, 1}}, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    const size_t n = 20011;
    std::vector<int64_t> data(n);
    for (size_t i = 0; i < n; ++i)
      data[i] = static_cast<int64_t>(i) * (r.rank + 1);
    Op op = makeOp(OpKind::AllReduce, ncclInt64);
    op.count = n;
    op.sendbuff = op.recvbuff = data.data();  // in place
    r.engine.launch({op}, r.stream);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    const int64_t factor = r.nranks * (r.nranks + 1) / 2;
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(data[i], static_cast<int64_t>(i) * factor) << "element " << i;
  });
}

// A program that drives several devices calls with any of them current:
// the engine makes its own device current for the launch (the emulated
// module, like CUDA, refuses a reduction on a stream of another device)
// and leaves the caller's current afterwards.
TEST(GpuPlanExecutor, LaunchesWithItsDeviceCurrentAndRestoresTheCallers) {
  Layout layout{{0, 0, 1}};
  layout.device = 2;
  runEngineRanks(layout, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    ASSERT_EQ(module.api().setDevice(5), 0);
    std::vector<float> data(5000, 1.0f + r.rank);
    Op op = makeOp(OpKind::AllReduce, ncclFloat32);
    op.count = data.size();
    op.sendbuff = op.recvbuff = data.data();
    r.engine.launch({op}, r.stream);
    int current = -1;
    ASSERT_EQ(module.api().getDevice(&current), 0);
    EXPECT_EQ(current, 5);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    EXPECT_EQ(data, std::vector<float>(data.size(), 6.0f));  // 1 + 2 + 3
    ASSERT_EQ(module.api().setDevice(2), 0);  // for the engine's teardown
  });
}

// In place, a rank's received blocks overwrite blocks it still has to
// send: the result must still be every rank's block for this rank.
TEST(GpuPlanExecutor, InPlaceAllToAllAcrossAndInsideDomains) {
  runEngineRanks({{0, 0, 1, 1, 1}}, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    const size_t n = 3001;  // several column slices of a 1 KiB step
    std::vector<int32_t> data(n * r.nranks);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<int32_t>(r.rank * 1000000 + i);
    Op op = makeOp(OpKind::AlltoAll, ncclInt32);
    op.count = n;
    op.sendbuff = op.recvbuff = data.data();
    r.engine.launch({op}, r.stream);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    for (int p = 0; p < r.nranks; ++p)
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(data[p * n + i],
                  static_cast<int32_t>(p * 1000000 + r.rank * n + i))
            << "block " << p << " element " << i;
  });
}

TEST(GpuPlanExecutor, NonRootReduceOutputStaysUntouched) {
  runEngineRanks({{0, 0, 1}}, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    Op reduce = makeOp(OpKind::Reduce, ncclFloat32, 2);
    Buffers b = buffersFor(reduce, r.rank, r.nranks);
    r.engine.launch({withBuffers(reduce, b)}, r.stream);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    if (r.rank != 2)
      EXPECT_EQ(b.recv, std::vector<char>(b.recv.size(), kUntouched));
    else
      EXPECT_NE(b.recv, std::vector<char>(b.recv.size(), kUntouched));
  });
}

// The launch only enqueues: with the caller's stream held back by a
// counter nobody has written yet, it still returns, and the work runs once
// the counter is written.
TEST(GpuPlanExecutor, LaunchReturnsBeforeTheWorkRuns) {
  runEngineRanks({{0, 1}}, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    uint64_t gate = 0;
    ASSERT_EQ(module.api().waitValue64(r.stream, &gate, 1), 0);
    Op allReduce = makeOp(OpKind::AllReduce, ncclFloat32);
    Buffers b = buffersFor(allReduce, r.rank, r.nranks);
    r.engine.launch({withBuffers(allReduce, b)}, r.stream);
    int idle = 1;
    ASSERT_EQ(module.api().streamQuery(r.stream, &idle), 0);
    EXPECT_EQ(idle, 0);
    EXPECT_EQ(b.recv, std::vector<char>(b.recv.size(), kUntouched));
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    ASSERT_EQ(module.api().streamSynchronize(r.stream), 0);
    EXPECT_NE(b.recv, std::vector<char>(b.recv.size(), kUntouched));
  });
}

// Rank 1 never launches: rank 0's plan waits for it until the
// communicator is aborted, and the abort lets rank 0's stream go (what its
// operation left is undefined; the emulated stream may say that its wait
// was released).
TEST(GpuPlanExecutor, AbortReleasesTheCallersStream) {
  runEngineRanks({{0, 1}}, [](EngineRank& r) {
    const DeviceModule& module = emulatedDeviceModule();
    Op allReduce = makeOp(OpKind::AllReduce, ncclFloat32);
    Buffers b = buffersFor(allReduce, r.rank, r.nranks);
    if (r.rank == 0) {
      r.engine.launch({withBuffers(allReduce, b)}, r.stream);
      EXPECT_FALSE(r.engine.drain(0.2));
      r.abort.raise(ncclRemoteError, "test: peer gone");
      r.engine.abort();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      r.abort.raise(ncclRemoteError, "test: peer gone");
    }
    const auto start = std::chrono::steady_clock::now();
    const int synced = module.api().streamSynchronize(r.stream);
    EXPECT_LT(std::chrono::steady_clock::now() - start,
              std::chrono::seconds(10));
    if (r.rank == 1) {
      EXPECT_EQ(synced, 0);
    }
    EXPECT_TRUE(r.engine.drain(10));
  });
}

// The emulated module, noting every thread that calls into it.
class CallerRecord {
 public:
  static std::set<std::thread::id> callers() {
    std::lock_guard<std::mutex> lock(mutex());
    return set();
  }
  static void note() {
    std::lock_guard<std::mutex> lock(mutex());
    set().insert(std::this_thread::get_id());
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::set<std::thread::id>& set() {
    static std::set<std::thread::id> s;
    return s;
  }
};

template <typename Entry, Entry hetcclDeviceModuleTable::*Field>
struct Noted;
template <typename... Args, int (*hetcclDeviceModuleTable::*Field)(Args...)>
struct Noted<int (*)(Args...), Field> {
  static int call(Args... args) {
    CallerRecord::note();
    return (emulatedDeviceModule().api().*Field)(args...);
  }
};
#define HETCCL_NOTED(name)                                    \
  table.name = Noted<decltype(hetcclDeviceModuleTable::name), \
                     &hetcclDeviceModuleTable::name>::call

const DeviceModule& notingModule() {
  static const hetcclDeviceModuleTable noting = [] {
    hetcclDeviceModuleTable table = emulatedDeviceModule().api();
    HETCCL_NOTED(setDevice);
    HETCCL_NOTED(deviceAlloc);
    HETCCL_NOTED(hostAlloc);
    HETCCL_NOTED(hostRegister);
    HETCCL_NOTED(streamCreate);
    HETCCL_NOTED(streamSynchronize);
    HETCCL_NOTED(streamQuery);
    HETCCL_NOTED(eventRecord);
    HETCCL_NOTED(streamWaitEvent);
    HETCCL_NOTED(copyAsync);
    HETCCL_NOTED(writeValue64);
    HETCCL_NOTED(waitValue64);
    HETCCL_NOTED(reduceAsync);
    HETCCL_NOTED(lowLatencyCollective);
    HETCCL_NOTED(stagedCopy);
    HETCCL_NOTED(loadKernels);
    return table;
  }();
  static const DeviceModule module(noting, "noting emulated module");
  return module;
}
#undef HETCCL_NOTED

// A launch enqueues all of its GPU work on the calling thread: the proxy
// and the transports never call into the runtime, which another thread of
// the application may hold for as long as the GPU is busy (a module loaded
// lazily waits for every stream). Large enough that the rings wrap.
TEST(GpuPlanExecutor, OnlyTheLaunchingThreadsCallTheRuntime) {
  std::mutex mutex;
  std::set<std::thread::id> rankThreads;
  for (const char* transport : {"shm", "tcp"}) {
    Layout layout{{0, 1, 1}, transport};
    layout.module = &notingModule();
    runEngineRanks(layout, [&](EngineRank& r) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        rankThreads.insert(std::this_thread::get_id());
      }
      Op allReduce = makeOp(OpKind::AllReduce, ncclFloat32);
      allReduce.count = 64 * 1024;
      std::vector<float> data(allReduce.count, 1.0f + r.rank);
      allReduce.sendbuff = allReduce.recvbuff = data.data();
      Op send = makeOp(OpKind::Send, ncclInt8, (r.rank + 1) % r.nranks);
      Op recv = makeOp(OpKind::Recv, ncclInt8, (r.rank + 2) % r.nranks);
      send.count = recv.count = 100 * 1000;
      std::vector<char> sent(send.count, static_cast<char>(r.rank + 1));
      std::vector<char> received(recv.count, kUntouched);
      send.sendbuff = sent.data();
      recv.recvbuff = received.data();
      r.engine.launch({allReduce}, r.stream);
      r.engine.launch({send, recv}, r.stream);
      ASSERT_EQ(notingModule().api().streamSynchronize(r.stream), 0);
      EXPECT_EQ(data, std::vector<float>(data.size(), 6.0f));  // 1 + 2 + 3
      const int from = (r.rank + 2) % r.nranks;
      EXPECT_EQ(received, std::vector<char>(received.size(),
                                            static_cast<char>(from + 1)));
    });
  }
  EXPECT_EQ(CallerRecord::callers(), rankThreads);
}

}  // namespace
}  // namespace hetccl
