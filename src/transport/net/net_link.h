// The Link that users of the net transport hold. Its lanes are the rails
// both ends use (net_devices.h): one progress thread of each end per rail,
// each thread's channel cutting its transfers into the plugin's messages
// (net_channel.h). Transfers are placed by LanePlacement::placePiece: a
// transfer on its own in even shares of at least `splitBytes` (rank 0's),
// one per lane at most, the first on the pair's home lane; a piece of a
// larger transfer whole on lane home + its index. Every share carries the
// call's signature in its own header.
// GPU buffers go to the plugin as they are where the devices take them
// (HETCCL_NET_GPU, movesGpuMemory), else the GPU engine stages them. It keeps
// the threads alive, so that a link that outlives its transport fails new
// transfers instead of crashing.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/device_module_loader.h"
#include "transport/lane_placement.h"
#include "transport/link.h"
#include "transport/net/net_devices.h"
#include "transport/net/net_progress_thread.h"

namespace hetccl {

class NetLink : public Link {
 public:
  // `gpuModule`: the rank's GPU's device module (null for a CPU rank), which
  // exports GPU buffers as DMA-BUF where `gpu` says so.
  NetLink(int rank, int peer,
          std::vector<std::shared_ptr<NetProgressThread>> lanes,
          size_t splitBytes, NetGpuPolicy gpu,
          const DeviceModule* gpuModule = nullptr);

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  bool movesGpuMemory(MemoryKind kind) const override;
  std::string whyStagesGpuMemory(MemoryKind kind) const override;
  std::string gpuMemoryPath(MemoryKind kind) const override;
  std::shared_ptr<TransferRequest> sendGpu(MemoryKind kind, const void* data,
                                           size_t bytes,
                                           const CallSignature& call,
                                           TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recvGpu(MemoryKind kind, void* data,
                                           size_t bytes,
                                           const CallSignature& call,
                                           TransferPiece piece = {}) override;
  size_t bytesSent() const override { return bytesSent_.load(); }
  size_t bytesReceived() const override { return bytesReceived_.load(); }
  uint64_t latestCallFrom() const override;

 private:
  using Direction = NetProgressThread::Direction;

  std::shared_ptr<TransferRequest> post(Direction direction, char* data,
                                        size_t bytes, MemoryKind memory,
                                        const CallSignature& call,
                                        TransferPiece piece);
  // Where a buffer of `kind` at `data` is, for its registration.
  NetMemory memoryOf(MemoryKind kind, const void* data) const;

  const int peer_;
  const std::vector<std::shared_ptr<NetProgressThread>> lanes_;
  const LanePlacement placement_;
  const NetGpuPolicy gpu_;
  const DeviceModule* const gpuModule_;
  std::atomic<size_t> bytesSent_{0};  // counted when posted
  std::atomic<size_t> bytesReceived_{0};
};

}  // namespace hetccl
