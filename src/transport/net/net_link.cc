#include "transport/net/net_link.h"

#include <algorithm>

#include "transport/even_shares.h"
#include "transport/net/net_devices.h"
#include "transport/request_group.h"
#include "util/error.h"

namespace hetccl {

NetLink::NetLink(int rank, int peer,
                 std::vector<std::shared_ptr<NetProgressThread>> lanes,
                 size_t splitBytes, NetGpuPolicy gpu,
                 const DeviceModule* gpuModule)
    : peer_(peer),
      lanes_(std::move(lanes)),
      placement_(rank, peer, lanes_.size(), splitBytes),
      gpu_(std::move(gpu)),
      gpuModule_(gpuModule) {
  HETCCL_CHECK_ARG(!lanes_.empty(), "net link to rank %d without lanes", peer);
  HETCCL_CHECK_ARG(!gpu_.viaDmaBuf() || gpuModule_ != nullptr,
                   "net link to rank %d: DMA-BUF without a device module",
                   peer);
}

std::shared_ptr<TransferRequest> NetLink::send(const void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece piece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "net link send of %zu bytes to rank %d: null buffer", bytes,
                   peer_);
  bytesSent_ += bytes;
  return post(Direction::kSend, static_cast<char*>(const_cast<void*>(data)),
              bytes, kHostMemory, call, piece);
}

std::shared_ptr<TransferRequest> NetLink::recv(void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece piece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "net link receive of %zu bytes from rank %d: null buffer",
                   bytes, peer_);
  bytesReceived_ += bytes;
  return post(Direction::kRecv, static_cast<char*>(data), bytes, kHostMemory,
              call, piece);
}

bool NetLink::movesGpuMemory(MemoryKind kind) const {
  return netTakesGpuMemory(gpu_, kind);
}

std::string NetLink::whyStagesGpuMemory(MemoryKind kind) const {
  return netNeedlessStaging(gpu_, kind);
}

std::string NetLink::gpuMemoryPath(MemoryKind kind) const {
  return netGpuMemoryPath(gpu_, kind);
}

// One export per transfer, whose shares register parts of it; the
// descriptor closes with the last of them.
NetMemory NetLink::memoryOf(MemoryKind kind, const void* data) const {
  if (kind == kHostMemory) return {};
  if (!gpu_.viaDmaBuf()) return {HETCCL_NET_MODULE_PTR_CUDA, nullptr, 0};
  int fd = -1;
  uint64_t offset = 0;
  gpuModule_->check(gpuModule_->api().exportDmaBuf(data, &fd, &offset),
                    "exporting a GPU buffer as DMA-BUF for the net plugin");
  // regMrDmaBuf's type is the memory's (NCCL_PTR_CUDA), as regMr's.
  return {HETCCL_NET_MODULE_PTR_CUDA, std::make_shared<const OwnedFd>(fd),
          offset};
}

std::shared_ptr<TransferRequest> NetLink::sendGpu(MemoryKind kind,
                                                  const void* data,
                                                  size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece piece) {
  HETCCL_CHECK_ARG(movesGpuMemory(kind),
                   "net link to rank %d: a send of %s memory it cannot move",
                   peer_, describeMemoryKinds(kind).c_str());
  bytesSent_ += bytes;
  return post(Direction::kSend, static_cast<char*>(const_cast<void*>(data)),
              bytes, kind, call, piece);
}

std::shared_ptr<TransferRequest> NetLink::recvGpu(MemoryKind kind, void* data,
                                                  size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece piece) {
  HETCCL_CHECK_ARG(movesGpuMemory(kind),
                   "net link from rank %d: a receive of %s memory it cannot "
                   "move",
                   peer_, describeMemoryKinds(kind).c_str());
  bytesReceived_ += bytes;
  return post(Direction::kRecv, static_cast<char*>(data), bytes, kind, call,
              piece);
}

std::shared_ptr<TransferRequest> NetLink::post(Direction direction, char* data,
                                               size_t bytes, MemoryKind memory,
                                               const CallSignature& call,
                                               TransferPiece piece) {
  const bool sending = direction == Direction::kSend;
  const NetMemory whole = memoryOf(memory, data);
  const LanePlacement::Parts placed = placement_.placePiece(bytes, piece);
  const size_t shares = placed.count;
  std::vector<std::shared_ptr<TransferRequest>> requests;
  size_t offset = 0;
  for (size_t share = 0; share < shares; ++share) {
    const size_t length = evenShare(bytes, shares, share);
    auto request =
        std::make_shared<PostedRequest>(TransferName{length, sending, peer_});
    lanes_[placed.laneOf(share, lanes_.size())]->post(
        peer_, direction, request, data + offset, length, bytes,
        whole.advancedBy(offset), call);
    requests.push_back(std::move(request));
    offset += length;
  }
  return requestFor(std::move(requests));
}

uint64_t NetLink::latestCallFrom() const {
  uint64_t latest = 0;
  for (const auto& lane : lanes_)
    latest = std::max(latest, lane->latestCallFrom(peer_));
  return latest;
}

}  // namespace hetccl
