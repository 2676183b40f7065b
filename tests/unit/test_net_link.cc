// The net transport over the stand-in NCCL net plugin (tests/net_plugin),
// ranks as threads of this process: listen handles exchanged over the
// out-of-band channel, polled connects and accepts, transfers of every
// size both ways over every ABI version, posts the plugin asks to retry,
// and that every failure (abort, a silent or lost peer, calls or sizes
// that disagree, a plugin call that fails) ends waits promptly with an
// error that says what happened.
#include "transport/net/net_link_set.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host/emulated_device_module.h"
#include "support/elapsed.h"
#include "support/expect_error.h"
#include "support/link_ranks.h"
#include "support/scoped_env.h"
#include "support/standin_net_plugin.h"
#include "support/test_call.h"
#include "transport/net/net_link.h"

namespace hetccl {
namespace {

using Ranks = LinkRanks<NetLinkSet>;
constexpr double kWaitSeconds = 20;
// The smallest share of the tests' links whatever the cores here.
constexpr size_t kNetSplitBytes = kNetFewCoresSplitBytes;

NetSettings withTestSplit(NetSettings settings) {
  if (settings.splitBytes == 0) settings.splitBytes = kNetSplitBytes;
  return settings;
}

// Every rank of the set loads `version` of the stand-in (0: all versions,
// so v12); the knobs in the environment apply from here on. `settingsOf`
// gives each rank's settings (the defaults without it, with shares of at
// least kNetSplitBytes where it leaves them to the cores).
// `gpuModule`: every rank's GPU's (null: CPU ranks).
Ranks makeRanks(int nranks, int version = 0,
                std::function<std::vector<int>(int)> peersOf = nullptr,
                std::function<NetSettings(int)> settingsOf = nullptr,
                const DeviceModule* gpuModule = nullptr) {
  const NetLibrary* net = &loadedNetLibrary(standInNetPlugin(version));
  return makeLinkRanks<NetLinkSet>(
      nranks,
      [net, settingsOf, gpuModule](Oob& oob, const std::vector<int>& peers,
                                   std::shared_ptr<AbortSignal> abort,
                                   std::shared_ptr<const CallLog> calls) {
        const NetSettings settings =
            withTestSplit(settingsOf ? settingsOf(oob.rank()) : NetSettings{});
        return std::make_unique<NetLinkSet>(oob, peers, abort, settings, 30,
                                            calls, net, HostSlot{}, gpuModule);
      },
      std::move(peersOf));
}

// A GPU runtime (the emulated one) whose devices export DMA-BUF: a memfd
// stands for the allocation, or the export fails.
const DeviceModule& dmaBufModule(bool exportWorks) {
  auto make = [](bool works) {
    hetcclDeviceModuleTable table = emulatedDeviceModule().api();
    table.dmaBufSupported = [](int* supported) {
      *supported = 1;
      return 0;
    };
    table.exportDmaBuf = works ? [](const void*, int* fd, uint64_t* offset) {
      // Sparse, as large as any buffer of the tests; the buffer at its start.
      *fd = memfd_create("hetccl-test-dmabuf", MFD_CLOEXEC);
      *offset = 0;
      return *fd >= 0 && ftruncate(*fd, off_t{1} << 30) == 0 ? 0 : 1;
    } : [](const void*, int*, uint64_t*) { return 1; };
    return table;
  };
  static const hetcclDeviceModuleTable working = make(true);
  static const hetcclDeviceModuleTable failing = make(false);
  static const DeviceModule workingModule(working, "DMA-BUF test module");
  static const DeviceModule failingModule(failing, "DMA-BUF test module");
  return exportWorks ? workingModule : failingModule;
}

NetSettings onDevices(const char* devices, GpuBuffers gpu = GpuBuffers::kAuto) {
  NetSettings settings;
  settings.devices = devices;
  settings.gpu = gpu;
  return settings;
}

TwoRanks twoOf(Ranks& ranks) {
  return {{ranks.transports[0].get(), ranks.transports[1].get()},
          {ranks.aborts[0].get(), ranks.aborts[1].get()},
          {ranks.calls[0].get(), ranks.calls[1].get()}};
}

TEST(NetLink, EverySizeBothDirectionsOnEveryVersion) {
  // Messages of at most 64 KiB (v9 on): a 9 MiB transfer goes in 144.
  ScopedEnv cut("HETCCL_TEST_NET_MAX_BYTES", "65536");
  for (int version = 8; version <= 12; ++version) {
    SCOPED_TRACE(version);
    Ranks ranks = makeRanks(2, version);
    exchangeAll(ranks.sets(), {0, 1, 4097, (1u << 20) + 3, 9u << 20, 0, 7});
  }
}

// Every post is refused three times first and every connect and accept
// needs 20 polls; three ranks, fully connected, each with 60 transfers to
// each peer in flight at once: the plugin's limit of 32 requests per comm
// holds (the stand-in fails a post beyond it).
TEST(NetLink, RetriedPostsSlowConnectsAndManyTransfersInFlight) {
  ScopedEnv retry("HETCCL_TEST_NET_RETRY", "3");
  ScopedEnv polls("HETCCL_TEST_NET_CONNECT_POLLS", "20");
  ScopedEnv cut("HETCCL_TEST_NET_MAX_BYTES", "32768");
  Ranks ranks = makeRanks(3);
  std::vector<size_t> sizes;
  for (int i = 0; i < 60; ++i)
    sizes.push_back(i % 7 == 0   ? 0
                    : i % 5 == 0 ? (1u << 20) + static_cast<size_t>(i)
                                 : (static_cast<size_t>(i) * 40009) % 300000);
  exchangeAll(ranks.sets(), sizes);
}

// Only the ranks with peers load and connect: rank 2 links with nobody.
TEST(NetLink, RanksWithoutPeersTakeNoPart) {
  Ranks ranks = makeRanks(3, 0, [](int rank) {
    return rank == 2 ? std::vector<int>{} : std::vector<int>{1 - rank};
  });
  exchangeAll({ranks.sets()[0], ranks.sets()[1]}, {0, 100000});
  EXPECT_EQ(expectError([&] { ranks.transports[2]->link(0); }).code(),
            ncclInvalidArgument);
}

TEST(NetLink, CallerAbortEndsAWaitPromptly) {
  Ranks ranks = makeRanks(2);
  expectCallerAbortEndsAWait(*ranks.transports[1]->link(0));
}

TEST(NetLink, TransportAbortStopsProgressAndFailsWaits) {
  Ranks ranks = makeRanks(2);
  expectTransportAbortFailsWaits(*ranks.transports[1]->link(0),
                                 *ranks.aborts[1]);
}

TEST(NetLink, ASilentPeerTimesOut) {
  Ranks ranks = makeRanks(2);
  expectSilentPeerTimesOut(*ranks.transports[0]->link(1));
}

TEST(NetLink, APeerThatGoesAwayIsARemoteError) {
  // Declared first: it must outlive the transfers still pending at the end.
  std::vector<uint8_t> buffer(1 << 20);
  Ranks ranks = makeRanks(2);
  auto link = ranks.transports[1]->link(0);
  auto request = link->recv(buffer.data(), buffer.size(), kTestCall);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto start = Clock::now();
  ranks.transports[0].reset();
  Error e = expectError([&] { request->wait(AbortSignal(), kWaitSeconds); });
  EXPECT_LT(secondsSince(start), 1.0);
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_NE(std::string(e.what()).find("on the link with rank 0"),
            std::string::npos)
      << e.what();
  auto later = link->recv(buffer.data(), 10, kTestCall);
  EXPECT_EQ(
      expectError([&] { later->wait(AbortSignal(), kWaitSeconds); }).code(),
      ncclRemoteError);
}

TEST(NetLink, ATestThatFailsMidTransferFailsItNamingThePluginAndCall) {
  ScopedEnv failing("HETCCL_TEST_NET_FAIL_TEST_AFTER", "40");
  ScopedEnv cut("HETCCL_TEST_NET_MAX_BYTES", "4096");
  std::vector<uint8_t> out(1 << 20), in(1 << 20);
  Ranks ranks = makeRanks(2, 11);
  auto send =
      ranks.transports[0]->link(1)->send(out.data(), out.size(), kTestCall);
  auto recv =
      ranks.transports[1]->link(0)->recv(in.data(), in.size(), kTestCall);
  // The rank whose test fails first breaks its link; its peer then sees
  // the connection go (the plugin's remote error): either way each names
  // the plugin and the call, and one of them the failure itself.
  int systemErrors = 0;
  for (auto* request : {send.get(), recv.get()}) {
    Error e = expectError([&] { request->wait(AbortSignal(), kWaitSeconds); });
    EXPECT_TRUE(e.code() == ncclSystemError || e.code() == ncclRemoteError)
        << e.what();
    systemErrors += e.code() == ncclSystemError;
    const std::string what = e.what();
    EXPECT_NE(what.find("net plugin hetccl-test (ABI v11, "), std::string::npos)
        << what;
    EXPECT_TRUE(
        what.find("test failed: ncclSystemError (2)") != std::string::npos ||
        what.find("test failed: ncclRemoteError (6)") != std::string::npos)
        << what;
  }
  EXPECT_GE(systemErrors, 1);
}

TEST(NetLink, ARefusedRegistrationFailsTheTransfer) {
  ScopedEnv refuse("HETCCL_TEST_NET_FAIL_REGMR", "4096");
  std::vector<uint8_t> out(8192), in(8192);
  Ranks ranks = makeRanks(2);
  auto recv =
      ranks.transports[1]->link(0)->recv(in.data(), in.size(), kTestCall);
  auto send =
      ranks.transports[0]->link(1)->send(out.data(), out.size(), kTestCall);
  Error e = expectError([&] { send->wait(AbortSignal(), kWaitSeconds); });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("regMr failed"), std::string::npos)
      << e.what();
  // The receiver's registration is refused as well, once the header says
  // the sizes agree.
  EXPECT_NE(
      expectError([&] { recv->wait(AbortSignal(), kWaitSeconds); }).code(),
      ncclSuccess);
}

TEST(NetLink, SizesThatDifferFailTheReceive) {
  std::vector<uint8_t> out(5000), in(4096);
  Ranks ranks = makeRanks(2);
  auto send =
      ranks.transports[0]->link(1)->send(out.data(), out.size(), kTestCall);
  auto recv =
      ranks.transports[1]->link(0)->recv(in.data(), in.size(), kTestCall);
  Error e = expectError([&] { recv->wait(AbortSignal(), kWaitSeconds); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("5000-byte"), std::string::npos)
      << e.what();
}

// Sizes on either side of a cut, on three rails, after a transfer that
// moves the link's count off a multiple of the lanes: the first shares
// meet on the home lane whatever the sizes, and the receive fails at once.
TEST(NetLink, SizesThatDifferFailAtOnceAcrossEveryCut) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "3");
  const std::pair<size_t, size_t> pairs[] = {
      {3000, 100 * 1024},
      {kNetSplitBytes, 2 * kNetSplitBytes},
      {3 * kNetSplitBytes, 2 * kNetSplitBytes},
      {kNetSplitBytes - 1, 3 * kNetSplitBytes}};
  for (auto [sent, posted] : pairs) {
    // Declared first: they must outlive the transfers still pending.
    std::vector<uint8_t> out(sent, 1), in(posted);
    Ranks ranks = makeRanks(2);
    Error e = expectSizesThatDifferFailAtOnce(twoOf(ranks), out, in);
    EXPECT_EQ(e.code(), ncclInvalidUsage) << e.what();
  }
}

// The pieces of a transfer (PiecedLink, as cross-domain plans send) go
// whole to the rails in turn and arrive whole: lone transfers, a piece and
// a short one, a piece per rail and more pieces than rails.
TEST(NetLink, PiecesOfATransferTakeTheRailsInTurnAndArriveWhole) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "3");
  ScopedEnv cut("HETCCL_TEST_NET_MAX_BYTES", "65536");
  Ranks ranks = makeRanks(2);
  exchangeAllInPieces(ranks.sets(),
                      {100, 300 << 10, 1 << 20, (1 << 20) + 1, 5 << 20, 7},
                      512 << 10);
}

// Transfers in pieces whose sizes differ fail at once, on three rails:
// where the first pieces differ, and where the pieces agree up to one
// that does not.
TEST(NetLink, TransfersInPiecesOfDifferentSizesFailAtOnce) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "3");
  const std::pair<size_t, size_t> pairs[] = {
      {1 << 20, 600 << 10}, {600 << 10, 1 << 20}, {300 << 10, 2 << 20}};
  for (auto [sent, posted] : pairs) {
    // Declared first: they must outlive the transfers still pending.
    std::vector<uint8_t> out(sent, 1), in(posted);
    Ranks ranks = makeRanks(2);
    Error e = expectSizesThatDifferFailAtOnce(twoOf(ranks), out, in, 2 << 20);
    EXPECT_EQ(e.code(), ncclInvalidUsage) << e.what();
  }
}

TEST(NetLink, CallsThatDisagreeFailBothEnds) {
  Ranks ranks = makeRanks(2);
  expectCallsThatDisagreeFailBothEnds(twoOf(ranks));
}

TEST(NetLink, CallsThatDisagreeAreReportedBeforeSizes) {
  Ranks ranks = makeRanks(2);
  expectDisagreementBeforeSizes(twoOf(ranks));
}

TEST(NetLink, AnUnclaimedTransferOfACallThatDisagreesFailsBothEnds) {
  Ranks ranks = makeRanks(2);
  expectUnclaimedCallThatDisagreesFailsBothEnds(twoOf(ranks));
}

// Three devices: rank 0 uses all, rank 1 two of them, so their link has
// two lanes; transfers of 512 KiB (256 KiB per lane) and more are cut
// across them, smaller ones start on the pair's home lane as well.
TEST(NetLink, TransfersAreSharedAcrossTheRailsBothEndsUse) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "3");
  ScopedEnv cut("HETCCL_TEST_NET_MAX_BYTES", "65536");
  Ranks ranks = makeRanks(2, 0, nullptr, [](int rank) {
    return onDevices(rank == 0 ? "auto" : "2,0");
  });
  exchangeAll(ranks.sets(), {0, 1, 2 * kNetSplitBytes - 1, 2 * kNetSplitBytes,
                             2 * kNetSplitBytes + 1, (3u << 20) + 5, 7, 0});
}

// HETCCL_NET_SPLIT: 0 (the default) leaves the smallest share to the
// cores, where the link set starts; a size stands, and one under 4 KiB is
// refused.
TEST(NetSettings, TheSmallestShareIsASizeOrLeftToTheCores) {
  {
    ScopedEnv split("HETCCL_NET_SPLIT", nullptr);
    EXPECT_EQ(0u, NetSettings::fromEnvironment().splitBytes);
  }
  {
    ScopedEnv split("HETCCL_NET_SPLIT", "128K");
    EXPECT_EQ(128u * 1024, NetSettings::fromEnvironment().splitBytes);
  }
  ScopedEnv split("HETCCL_NET_SPLIT", "1K");
  EXPECT_EQ(expectError([] { NetSettings::fromEnvironment(); }).code(),
            ncclInvalidArgument);
}

// Rank 0's smallest share is every rank's: cut by their own (64 KiB and
// 256 KiB), transfers between the two would not meet.
TEST(NetLink, EveryRankCutsAsRankZeroSays) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "4");
  constexpr size_t kRankZeroSplit = 64 * 1024;
  Ranks ranks = makeRanks(2, 0, nullptr, [](int rank) {
    NetSettings settings;
    settings.splitBytes = rank == 0 ? kRankZeroSplit : kNetSplitBytes;
    return settings;
  });
  exchangeAll(ranks.sets(), {2 * kRankZeroSplit - 1, 2 * kRankZeroSplit,
                             3 * kRankZeroSplit, 2 * kNetSplitBytes + 1});
}

// Three ranks on rails chosen by hand, each pair with a different number
// of lanes, every transfer in flight at once.
TEST(NetLink, EveryPairGetsTheLanesItsEndsShare) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "4");
  ScopedEnv cut("HETCCL_TEST_NET_MAX_BYTES", "32768");
  const char* const rails[] = {"0,1,2,3", "1", "3,2"};
  Ranks ranks = makeRanks(3, 12, nullptr,
                          [&](int rank) { return onDevices(rails[rank]); });
  exchangeAll(ranks.sets(),
              {4 * kNetSplitBytes + 3, 100, kNetSplitBytes, 0, (2u << 20) + 1});
}

TEST(NetLink, ADeviceThePluginLacksFailsEveryRank) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "2");
  Error e = expectError([] {
    makeRanks(2, 0, nullptr,
              [](int rank) { return onDevices(rank == 1 ? "0,2" : "auto"); });
  });
  EXPECT_EQ(e.code(), ncclSystemError) << e.what();
  EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos)
      << e.what();
}

// Devices that take GPU memory (NCCL_PTR_CUDA): GPU buffers go to the
// plugin as they are, registered as GPU memory, and a receive ends with
// the plugin's flush. (Without a GPU the stand-in moves such memory as
// host memory, as a GPUDirect NIC would move it.)
TEST(NetLink, GpuBuffersGoToAPluginThatTakesThem) {
  ScopedEnv cuda("HETCCL_TEST_NET_PTR_CUDA", "1");
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "2");
  Ranks ranks = makeRanks(2, 0, nullptr, [](int) { return onDevices("0,1"); });
  auto sender = ranks.transports[0]->link(1);
  auto receiver = ranks.transports[1]->link(0);
  ASSERT_TRUE(sender->movesGpuMemory(kCudaMemory));
  ASSERT_TRUE(receiver->movesGpuMemory(kHipMemory));
  EXPECT_EQ(sender->whyStagesGpuMemory(kCudaMemory), "");
  for (size_t bytes : {size_t{0}, size_t{5}, 2 * kNetSplitBytes + 3}) {
    std::vector<uint8_t> out(bytes), in(bytes, 0xEE);
    for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(i * 7);
    auto send = sender->sendGpu(kCudaMemory, out.data(), bytes, kTestCall);
    auto recv = receiver->recvGpu(kCudaMemory, in.data(), bytes, kTestCall);
    recv->wait(AbortSignal(), kWaitSeconds);
    send->wait(AbortSignal(), kWaitSeconds);
    EXPECT_EQ(in, out) << bytes;
  }
}

TEST(NetLink, AFlushThatFailsFailsTheReceiveIntoGpuMemory) {
  ScopedEnv cuda("HETCCL_TEST_NET_PTR_CUDA", "1");
  ScopedEnv flush("HETCCL_TEST_NET_FAIL_FLUSH", "1");
  std::vector<uint8_t> out(4096), in(4096);
  Ranks ranks = makeRanks(2);
  auto sender = ranks.transports[0]->link(1);
  auto receiver = ranks.transports[1]->link(0);
  // A receive into host memory needs no flush.
  auto hostSend = sender->send(out.data(), out.size(), kTestCall);
  auto hostRecv = receiver->recv(in.data(), in.size(), kTestCall);
  hostRecv->wait(AbortSignal(), kWaitSeconds);
  hostSend->wait(AbortSignal(), kWaitSeconds);
  auto send = sender->send(out.data(), out.size(), kTestCall);
  auto recv = receiver->recvGpu(kCudaMemory, in.data(), in.size(), kTestCall);
  send->wait(AbortSignal(), kWaitSeconds);
  Error e = expectError([&] { recv->wait(AbortSignal(), kWaitSeconds); });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("iflush failed"), std::string::npos)
      << e.what();
}

// Devices of DMA-BUF only (no NCCL_PTR_CUDA): GPU buffers go through a
// descriptor of their allocation (regMrDmaBuf; the stand-in refuses GPU
// memory through regMr) where the GPU exports one, shared by the shares of
// a transfer cut across two rails.
TEST(NetLink, GpuBuffersGoThroughDmaBufWhereTheGpuExportsIt) {
  ScopedEnv dmaBuf("HETCCL_TEST_NET_PTR_DMABUF", "1");
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "2");
  Ranks ranks = makeRanks(
      2, 0, nullptr, [](int) { return onDevices("0,1"); }, &dmaBufModule(true));
  auto sender = ranks.transports[0]->link(1);
  auto receiver = ranks.transports[1]->link(0);
  ASSERT_TRUE(sender->movesGpuMemory(kCudaMemory));
  for (size_t bytes : {size_t{3}, 2 * kNetSplitBytes + 5}) {
    std::vector<uint8_t> out(bytes), in(bytes, 0xEE);
    for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(i * 13);
    auto send = sender->sendGpu(kCudaMemory, out.data(), bytes, kTestCall);
    auto recv = receiver->recvGpu(kCudaMemory, in.data(), bytes, kTestCall);
    recv->wait(AbortSignal(), kWaitSeconds);
    send->wait(AbortSignal(), kWaitSeconds);
    EXPECT_EQ(in, out) << bytes;
  }
}

// Without a GPU that exports DMA-BUF such devices take no GPU buffers, and
// an export that fails fails the transfer, saying so.
TEST(NetLink, DmaBufDevicesNeedAGpuThatExports) {
  ScopedEnv dmaBuf("HETCCL_TEST_NET_PTR_DMABUF", "1");
  {
    Ranks ranks = makeRanks(2);
    EXPECT_FALSE(ranks.transports[0]->link(1)->movesGpuMemory(kCudaMemory));
  }
  Ranks ranks = makeRanks(2, 0, nullptr, nullptr, &dmaBufModule(false));
  std::vector<uint8_t> buffer(4096);
  Error e = expectError([&] {
    ranks.transports[0]->link(1)->sendGpu(kCudaMemory, buffer.data(),
                                          buffer.size(), kTestCall);
  });
  EXPECT_NE(std::string(e.what()).find("exporting a GPU buffer as DMA-BUF"),
            std::string::npos)
      << e.what();
}

// Devices of host memory only: GPU buffers are staged, and demanding
// otherwise (HETCCL_NET_GPU=1) fails, naming the plugin.
TEST(NetLink, GpuBuffersAreStagedWhereThePluginTakesHostMemoryOnly) {
  Ranks ranks = makeRanks(2, 0, nullptr, [](int rank) {
    return onDevices("auto",
                     rank == 0 ? GpuBuffers::kAuto : GpuBuffers::kRequired);
  });
  EXPECT_FALSE(ranks.transports[0]->link(1)->movesGpuMemory(kCudaMemory));
  EXPECT_TRUE(ranks.transports[0]->link(1)->movesGpuMemory(kHostMemory));
  Error e = expectError(
      [&] { ranks.transports[1]->link(0)->movesGpuMemory(kCudaMemory); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("HETCCL_NET_GPU=1, but net plugin "
                                       "hetccl-test"),
            std::string::npos)
      << e.what();
}

TEST(NetLink, SaysTheLatestCollectiveThatArrived) {
  Ranks ranks = makeRanks(2);
  expectLatestCallFromFollowsCollectives(twoOf(ranks));
}

}  // namespace
}  // namespace hetccl
