// Which of a plugin's devices a rank uses (HETCCL_NET_DEVICES), which
// devices `auto` leaves to the tcp transport, and which GPU buffers go to
// the plugin as they are (HETCCL_NET_GPU).
#include "transport/net/net_devices.h"

#include <gtest/gtest.h>

#include <cstring>

#include "support/expect_error.h"

namespace hetccl {
namespace {

using Devices = std::vector<int>;

// `count` devices of distinct names.
std::vector<std::string> nics(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back("mlx5_" + std::to_string(i));
  return names;
}

TEST(NetDevices, AutoGivesEachRankOfAFullHostItsRail) {
  for (int index = 0; index < 8; ++index)
    EXPECT_EQ(chooseNetDevices("auto", nics(8), {index, 8}), Devices{index});
  // More ranks than devices: they share them round the host.
  EXPECT_EQ(chooseNetDevices("auto", nics(4), {6, 8}), Devices{2});
  EXPECT_EQ(chooseNetDevices("", nics(1), {3, 4}), Devices{0});
}

TEST(NetDevices, AutoSharesAHostsDevicesAmongFewerRanks) {
  EXPECT_EQ(chooseNetDevices("auto", nics(4), {0, 1}), (Devices{0, 1, 2, 3}));
  EXPECT_EQ(chooseNetDevices("auto", nics(8), {1, 2}), (Devices{1, 3, 5, 7}));
  EXPECT_EQ(chooseNetDevices("auto", nics(3), {0, 2}), (Devices{0, 2}));
  EXPECT_EQ(chooseNetDevices("auto", nics(3), {1, 2}), (Devices{1}));
  // Never more rails than a rank may have.
  EXPECT_EQ(chooseNetDevices("auto", nics(40), {0, 1}).size(),
            static_cast<size_t>(kMaxNetRails));
}

// libfabric's tcp provider lists an interface once per address: one NIC.
TEST(NetDevices, AutoCountsDevicesOfOneNameAsOneNic) {
  const std::vector<std::string> names = {"eth0", "eth0", "eth1", "eth0"};
  EXPECT_EQ(chooseNetDevices("auto", names, {0, 1}), (Devices{0, 2}));
  EXPECT_EQ(chooseNetDevices("auto", names, {1, 2}), Devices{2});
  EXPECT_EQ(chooseNetDevices("auto", {"eth0", "eth0"}, {1, 2}), Devices{0});
  // A list is taken as it is.
  EXPECT_EQ(chooseNetDevices("0,1", names, {0, 1}), (Devices{0, 1}));
}

TEST(NetDevices, AListNamesTheDevicesInItsOrder) {
  EXPECT_EQ(chooseNetDevices("3,1", nics(4), {0, 1}), (Devices{3, 1}));
  EXPECT_EQ(chooseNetDevices("0", nics(1), {5, 8}), Devices{0});
}

TEST(NetDevices, AMalformedListIsAnInvalidArgument) {
  for (const char* bad : {"1,", "a", "0,0", "4", "-1", "1;2", ","}) {
    Error e = expectError([&] { chooseNetDevices(bad, nics(4), {0, 1}); });
    EXPECT_EQ(e.code(), ncclInvalidArgument) << bad;
    EXPECT_NE(std::string(e.what()).find("HETCCL_NET_DEVICES"),
              std::string::npos)
        << e.what();
  }
}

hetcclNetDeviceInfo device(const char* name, int ptrSupport) {
  hetcclNetDeviceInfo info{};
  std::strncpy(info.name, name, sizeof info.name - 1);
  info.ptrSupport = ptrSupport;
  return info;
}

TEST(NetDevices, AKernelInterfaceOfHostMemoryIsAPlainSocket) {
  EXPECT_TRUE(isPlainSocket(device("lo", HETCCL_NET_MODULE_PTR_HOST)));
  // GPUDirect over sockets (TCPX) is more than a socket.
  EXPECT_FALSE(isPlainSocket(
      device("lo", HETCCL_NET_MODULE_PTR_HOST | HETCCL_NET_MODULE_PTR_CUDA)));
  // RDMA devices are not the kernel's interfaces (mlx5_0, rdmap0s6, cxi0).
  EXPECT_FALSE(isPlainSocket(device("mlx5_0", HETCCL_NET_MODULE_PTR_HOST)));
}

NetGpuPolicy policy(GpuBuffers mode, int pointerSupport,
                    bool gpuExportsDmaBuf = false) {
  return {mode, pointerSupport, gpuExportsDmaBuf, "plugin X"};
}

TEST(NetDevices, GpuBuffersGoAsTheyAreOnlyWhereEveryDeviceTakesThem) {
  const int host = HETCCL_NET_MODULE_PTR_HOST;
  const int gpu = host | HETCCL_NET_MODULE_PTR_CUDA;
  EXPECT_TRUE(netTakesGpuMemory(policy(GpuBuffers::kAuto, gpu), kCudaMemory));
  EXPECT_TRUE(netTakesGpuMemory(policy(GpuBuffers::kAuto, gpu), kHipMemory));
  EXPECT_FALSE(netTakesGpuMemory(policy(GpuBuffers::kAuto, host), kCudaMemory));
  EXPECT_FALSE(
      netTakesGpuMemory(policy(GpuBuffers::kStaged, gpu), kCudaMemory));
  EXPECT_TRUE(
      netTakesGpuMemory(policy(GpuBuffers::kRequired, gpu), kCudaMemory));
  // Emulated GPUs' memory is the host's.
  EXPECT_TRUE(netTakesGpuMemory(policy(GpuBuffers::kAuto, host), kHostMemory));
  EXPECT_FALSE(
      netTakesGpuMemory(policy(GpuBuffers::kStaged, host), kHostMemory));
  Error e = expectError([&] {
    netTakesGpuMemory(policy(GpuBuffers::kRequired, host), kCudaMemory);
  });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("plugin X cannot take cuda memory"),
            std::string::npos)
      << e.what();
}

TEST(NetDevices, DevicesOfDmaBufTakeGpuBuffersOnlyFromAGpuThatExports) {
  const int dmaBuf = HETCCL_NET_MODULE_PTR_HOST | HETCCL_NET_MODULE_PTR_DMABUF;
  EXPECT_FALSE(
      netTakesGpuMemory(policy(GpuBuffers::kAuto, dmaBuf), kCudaMemory));
  EXPECT_TRUE(
      netTakesGpuMemory(policy(GpuBuffers::kAuto, dmaBuf, true), kCudaMemory));
  EXPECT_TRUE(policy(GpuBuffers::kAuto, dmaBuf, true).viaDmaBuf());
  // Both kinds: DMA-BUF first, as NCCL prefers it.
  EXPECT_TRUE(
      policy(GpuBuffers::kAuto, dmaBuf | HETCCL_NET_MODULE_PTR_CUDA, true)
          .viaDmaBuf());
  EXPECT_FALSE(
      policy(GpuBuffers::kAuto, dmaBuf | HETCCL_NET_MODULE_PTR_CUDA, false)
          .viaDmaBuf());
  Error e = expectError([&] {
    netTakesGpuMemory(policy(GpuBuffers::kRequired, dmaBuf), kCudaMemory);
  });
  EXPECT_NE(std::string(e.what()).find("this GPU exports no DMA-BUF"),
            std::string::npos)
      << e.what();
}

TEST(NetDevices, StagingSaysWhyOnlyWhereItCostsSomething) {
  const int gpu = HETCCL_NET_MODULE_PTR_HOST | HETCCL_NET_MODULE_PTR_CUDA;
  EXPECT_NE(netNeedlessStaging(policy(GpuBuffers::kStaged, gpu), kCudaMemory),
            "");
  EXPECT_EQ(
      netNeedlessStaging(
          policy(GpuBuffers::kStaged, HETCCL_NET_MODULE_PTR_HOST), kCudaMemory),
      "");
  EXPECT_EQ(netNeedlessStaging(policy(GpuBuffers::kAuto, gpu), kCudaMemory),
            "");
}

// What hetcclCommGpuBuffers and the doctor say of each case.
TEST(NetDevices, WhereGpuBuffersGoIsSaidWithWhy) {
  const int host = HETCCL_NET_MODULE_PTR_HOST;
  const int gpu = host | HETCCL_NET_MODULE_PTR_CUDA;
  const int dmaBuf = host | HETCCL_NET_MODULE_PTR_DMABUF;
  EXPECT_EQ(netGpuMemoryPath(policy(GpuBuffers::kAuto, gpu), kCudaMemory),
            "handed to plugin X as they are (cuda memory, as GPU pointers)");
  EXPECT_EQ(
      netGpuMemoryPath(policy(GpuBuffers::kAuto, dmaBuf, true), kCudaMemory),
      "handed to plugin X as they are (cuda memory, through DMA-BUF)");
  EXPECT_EQ(netGpuMemoryPath(policy(GpuBuffers::kAuto, host), kHostMemory),
            "handed to plugin X as they are (a GPU emulated in host memory)");
  EXPECT_EQ(netGpuMemoryPath(policy(GpuBuffers::kAuto, host), kCudaMemory),
            "staged through host memory: plugin X takes no cuda memory on "
            "these devices (their ptrSupport: host)");
  EXPECT_EQ(netGpuMemoryPath(policy(GpuBuffers::kStaged, host), kCudaMemory),
            "staged through host memory (HETCCL_NET_GPU=0)");
  EXPECT_EQ(
      netGpuMemoryPath(policy(GpuBuffers::kStaged, gpu), kCudaMemory),
      "staged through host memory: " +
          netNeedlessStaging(policy(GpuBuffers::kStaged, gpu), kCudaMemory));
}

TEST(NetDevices, PointerSupportInWords) {
  EXPECT_EQ(describePointerSupport(0), "none");
  EXPECT_EQ(describePointerSupport(7), "host|cuda|dmabuf");
}

}  // namespace
}  // namespace hetccl
