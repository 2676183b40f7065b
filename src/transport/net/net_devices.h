// Which of a plugin's devices a rank's net links use, and what those
// devices take: the rails (HETCCL_NET_DEVICES), whether a device is a plain
// socket (which `auto` leaves to the tcp transport), and whether GPU
// buffers go to the plugin as they are (HETCCL_NET_GPU).
#pragma once

#include <string>
#include <vector>

#include "runtime/memory_kind.h"
#include "transport/gpu_buffers.h"
#include "transport/host_slot.h"
#include "transport/net/net_module.h"

namespace hetccl {

// At most this many devices per rank (a host's NICs; 16 covers two per GPU
// on 8-GPU nodes).
constexpr int kMaxNetRails = 16;

// The devices (indices into the plugin's list) a rank uses, one rail each.
// `setting` is HETCCL_NET_DEVICES: "auto" shares the host's NICs among its
// ranks (rank i of n on a host of d NICs takes NIC i mod d when n >= d, the
// rail NCCL gives the i-th GPU, else every NIC j with j mod n == i), where
// a NIC is the first of the devices that share a name (libfabric's tcp
// provider lists one interface several times); or a comma list of
// indices, taken as they are. Throws ncclInvalidArgument for a malformed
// list or an index the plugin does not have.
std::vector<int> chooseNetDevices(const std::string& setting,
                                  const std::vector<std::string>& deviceNames,
                                  HostSlot slot);

// Whether a device is one of the kernel's network interfaces reached
// through plain sockets (NCCL's socket transport, libfabric's tcp
// provider): a device name the kernel knows and no GPU memory.
bool isPlainSocket(const hetcclNetDeviceInfo& device);

// Which GPU buffers a rank's net links take as they are: HETCCL_NET_GPU,
// what its devices take (their NCCL_PTR_* bits, ANDed), and whether its GPU
// exports DMA-BUF, which a device of NCCL_PTR_DMABUF needs.
struct NetGpuPolicy {
  GpuBuffers mode = GpuBuffers::kAuto;
  int pointerSupport = HETCCL_NET_MODULE_PTR_HOST;
  bool gpuExportsDmaBuf = false;
  std::string plugin;  // for messages

  // Whether GPU buffers go through a DMA-BUF descriptor (preferred, as
  // NCCL prefers it) rather than as plain GPU pointers (NCCL_PTR_CUDA).
  bool viaDmaBuf() const {
    return gpuExportsDmaBuf && (pointerSupport & HETCCL_NET_MODULE_PTR_DMABUF);
  }
};

// Whether net links under `policy` take buffers in memory of `kind` as
// they are (host memory: always, unless staged). Throws ncclInvalidUsage
// where HETCCL_NET_GPU=1 asks for GPU memory the devices cannot take.
bool netTakesGpuMemory(const NetGpuPolicy& policy, MemoryKind kind);
// Why the links stage memory of `kind` that `auto` would hand over
// (HETCCL_NET_GPU=0), and what to set; empty otherwise.
std::string netNeedlessStaging(const NetGpuPolicy& policy, MemoryKind kind);
// Where the links put buffers in memory of `kind` and why
// (NetLink::gpuMemoryPath).
std::string netGpuMemoryPath(const NetGpuPolicy& policy, MemoryKind kind);

// The ABI's NCCL_PTR_* bits as words: "host|cuda".
std::string describePointerSupport(int bits);

}  // namespace hetccl
