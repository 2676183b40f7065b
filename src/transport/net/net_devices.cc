#include "transport/net/net_devices.h"

#include <net/if.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "util/error.h"

namespace hetccl {
namespace {

// The first device of each name: one per NIC.
std::vector<int> distinctNics(const std::vector<std::string>& deviceNames) {
  std::vector<int> nics;
  for (int dev = 0; dev < static_cast<int>(deviceNames.size()); ++dev) {
    bool seen = false;
    for (int nic : nics) seen = seen || deviceNames[nic] == deviceNames[dev];
    if (!seen) nics.push_back(dev);
  }
  return nics;
}

std::vector<int> devicesByHostSlot(const std::vector<std::string>& deviceNames,
                                   HostSlot slot) {
  const std::vector<int> nics = distinctNics(deviceNames);
  const int count = static_cast<int>(nics.size());
  const int ranks = std::max(slot.ranks, 1);
  const int index = slot.index % ranks;
  if (ranks >= count) return {nics[index % count]};
  std::vector<int> devices;
  for (int nic = index; nic < count; nic += ranks) devices.push_back(nics[nic]);
  return devices;
}

[[noreturn]] void badList(const std::string& setting, int deviceCount,
                          const char* why) {
  fail(ncclInvalidArgument,
       "HETCCL_NET_DEVICES=\"%s\": %s; expected auto or a comma list of "
       "device indices from 0 to %d (the plugin's devices: hetccl-info)",
       setting.c_str(), why, deviceCount - 1);
}

std::vector<int> parseDeviceList(const std::string& setting, int deviceCount) {
  std::vector<int> devices;
  size_t at = 0;
  while (at <= setting.size()) {
    const size_t comma = std::min(setting.find(',', at), setting.size());
    const std::string item = setting.substr(at, comma - at);
    char* end = nullptr;
    const long dev = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0')
      badList(setting, deviceCount, "not a list");
    if (dev < 0 || dev >= deviceCount)
      badList(setting, deviceCount, "no such device");
    if (std::find(devices.begin(), devices.end(), dev) != devices.end())
      badList(setting, deviceCount, "a device named twice");
    devices.push_back(static_cast<int>(dev));
    at = comma + 1;
  }
  if (static_cast<int>(devices.size()) > kMaxNetRails)
    badList(setting, deviceCount, "more devices than a rank may use (16)");
  return devices;
}

}  // namespace

std::vector<int> chooseNetDevices(const std::string& setting,
                                  const std::vector<std::string>& deviceNames,
                                  HostSlot slot) {
  HETCCL_CHECK_ARG(!deviceNames.empty(), "a net plugin without devices");
  std::vector<int> devices =
      setting.empty() || setting == "auto"
          ? devicesByHostSlot(deviceNames, slot)
          : parseDeviceList(setting, static_cast<int>(deviceNames.size()));
  if (static_cast<int>(devices.size()) > kMaxNetRails)
    devices.resize(kMaxNetRails);
  return devices;
}

bool isPlainSocket(const hetcclNetDeviceInfo& device) {
  const int gpuBits = HETCCL_NET_MODULE_PTR_CUDA | HETCCL_NET_MODULE_PTR_DMABUF;
  return (device.ptrSupport & gpuBits) == 0 && if_nametoindex(device.name) != 0;
}

bool netTakesGpuMemory(const NetGpuPolicy& policy, MemoryKind kind) {
  if (policy.mode == GpuBuffers::kStaged) return false;
  if (kind == kHostMemory) return true;
  const bool takes = (policy.pointerSupport & HETCCL_NET_MODULE_PTR_CUDA) ||
                     policy.viaDmaBuf();
  if (policy.mode == GpuBuffers::kAuto || takes) return takes;
  const bool dmaBufOnly = policy.pointerSupport & HETCCL_NET_MODULE_PTR_DMABUF;
  fail(ncclInvalidUsage,
       "HETCCL_NET_GPU=1, but %s cannot take %s memory on the devices this "
       "rank uses (their ptrSupport: %s%s); use a plugin with GPUDirect RDMA "
       "(hetccl-info lists what it takes), or unset HETCCL_NET_GPU to stage "
       "GPU buffers through host memory",
       policy.plugin.c_str(), describeMemoryKinds(kind).c_str(),
       describePointerSupport(policy.pointerSupport).c_str(),
       dmaBufOnly ? "; this GPU exports no DMA-BUF" : "");
}

std::string netNeedlessStaging(const NetGpuPolicy& policy, MemoryKind kind) {
  NetGpuPolicy automatic = policy;
  automatic.mode = GpuBuffers::kAuto;
  if (policy.mode != GpuBuffers::kStaged || !netTakesGpuMemory(automatic, kind))
    return "";
  return format(
      "HETCCL_NET_GPU=0, though the net plugin takes %s memory itself; unset "
      "HETCCL_NET_GPU",
      describeMemoryKinds(kind).c_str());
}

std::string netGpuMemoryPath(const NetGpuPolicy& policy, MemoryKind kind) {
  const std::string memory = describeMemoryKinds(kind);
  if (netTakesGpuMemory(policy, kind))
    return kind == kHostMemory
               ? format(
                     "handed to %s as they are (a GPU emulated in host "
                     "memory)",
                     policy.plugin.c_str())
               : format("handed to %s as they are (%s memory, %s)",
                        policy.plugin.c_str(), memory.c_str(),
                        policy.viaDmaBuf() ? "through DMA-BUF"
                                           : "as GPU pointers");
  const std::string needless = netNeedlessStaging(policy, kind);
  if (!needless.empty()) return "staged through host memory: " + needless;
  if (policy.mode == GpuBuffers::kStaged)
    return "staged through host memory (HETCCL_NET_GPU=0)";
  return format(
      "staged through host memory: %s takes no %s memory on these devices "
      "(their ptrSupport: %s)",
      policy.plugin.c_str(), memory.c_str(),
      describePointerSupport(policy.pointerSupport).c_str());
}

std::string describePointerSupport(int bits) {
  std::string text;
  for (auto [bit, name] : {std::pair{HETCCL_NET_MODULE_PTR_HOST, "host"},
                           {HETCCL_NET_MODULE_PTR_CUDA, "cuda"},
                           {HETCCL_NET_MODULE_PTR_DMABUF, "dmabuf"}})
    if (bits & bit) text += std::string(text.empty() ? "" : "|") + name;
  return text.empty() ? "none" : text;
}

}  // namespace hetccl
