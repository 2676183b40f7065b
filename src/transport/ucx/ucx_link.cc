#include "transport/ucx/ucx_link.h"

#include <algorithm>

#include "transport/even_shares.h"
#include "transport/request_group.h"
#include "transport/ucx/ucx_library.h"
#include "util/error.h"

namespace hetccl {

// The module takes memory types as the same bits.
static_assert(HETCCL_UCX_MEMORY_HOST == kHostMemory &&
              HETCCL_UCX_MEMORY_CUDA == kCudaMemory &&
              HETCCL_UCX_MEMORY_ROCM == kHipMemory);

UcxLink::UcxLink(int rank, int peer, uint8_t linkSet,
                 std::vector<std::shared_ptr<UcxWorkerThread>> lanes,
                 size_t splitBytes, size_t partBytes, UcxGpuPolicy gpu)
    : rank_(rank),
      peer_(peer),
      linkSet_(linkSet),
      gpu_(gpu),
      placement_(rank, peer, lanes.size(), splitBytes, partBytes),
      lanes_(std::move(lanes)),
      sends_(UcxWorkerThread::Direction::kSend),
      receives_(UcxWorkerThread::Direction::kRecv) {}

std::shared_ptr<TransferRequest> UcxLink::send(const void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece piece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "ucx link send of %zu bytes to rank %d: null buffer", bytes,
                   peer_);
  bytesSent_ += bytes;
  return post(sends_, static_cast<char*>(const_cast<void*>(data)), bytes,
              kHostMemory, call, piece);
}

std::shared_ptr<TransferRequest> UcxLink::recv(void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece piece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "ucx link receive of %zu bytes from rank %d: null buffer",
                   bytes, peer_);
  bytesReceived_ += bytes;
  return post(receives_, static_cast<char*>(data), bytes, kHostMemory, call,
              piece);
}

// Without RDMA, UCX moves GPU memory through host memory itself, and
// slowly: over its tcp on the H200 machine one link moved 0.5 GB/s from GPU
// memory (12 from host memory), where the engine's staging carried 5
// (bench/results/ucx-gpu-direct-2026-12-01.md). So by default only RDMA
// gets the buffers as they are.
bool takesGpuMemory(const UcxGpuPolicy& policy, MemoryKind kind) {
  if (policy.mode == GpuBuffers::kStaged) return false;
  if (kind == kHostMemory) return true;
  const bool typeKnown = policy.ucxMemory & kind;
  if (policy.mode == GpuBuffers::kAuto) return typeKnown && policy.rdma;
  if (!typeKnown)
    fail(ncclInvalidUsage,
         "HETCCL_UCX_GPU=1, but UCX here cannot move %s memory (its memory "
         "types: %s); use a UCX built with CUDA or ROCm (ucx_info -v), or "
         "unset HETCCL_UCX_GPU to stage GPU buffers through host memory",
         describeMemoryKinds(kind).c_str(),
         describeMemoryKinds(policy.ucxMemory).c_str());
  return true;
}

// Only where `auto` would hand the buffers over: without RDMA staging is
// the faster path (above), and HETCCL_UCX_GPU=0 is then no loss.
std::string needlessStaging(const UcxGpuPolicy& policy, MemoryKind kind) {
  if (policy.mode != GpuBuffers::kStaged ||
      !takesGpuMemory({GpuBuffers::kAuto, policy.ucxMemory, policy.rdma}, kind))
    return "";
  return format(
      "HETCCL_UCX_GPU=0, though UCX here moves %s memory itself%s; unset "
      "HETCCL_UCX_GPU",
      describeMemoryKinds(kind).c_str(),
      kind == kHostMemory ? "" : " (with RDMA)");
}

std::string ucxGpuMemoryPath(const UcxGpuPolicy& policy, MemoryKind kind) {
  const std::string memory = describeMemoryKinds(kind);
  if (takesGpuMemory(policy, kind)) {
    if (kind == kHostMemory)
      return "handed to UCX as they are (a GPU emulated in host memory)";
    return format("handed to UCX as they are (%s memory%s)", memory.c_str(),
                  policy.rdma ? ", over RDMA"
                              : "; HETCCL_UCX_GPU=1 without RDMA: UCX "
                                "copies them itself");
  }
  const std::string needless = needlessStaging(policy, kind);
  if (!needless.empty()) return "staged through host memory: " + needless;
  if (policy.mode == GpuBuffers::kStaged)
    return "staged through host memory (HETCCL_UCX_GPU=0)";
  if (!(policy.ucxMemory & kind))
    return format(
        "staged through host memory: UCX here does not move %s memory (its "
        "memory types: %s; ucx_info -v shows how it was built)",
        memory.c_str(), describeMemoryKinds(policy.ucxMemory).c_str());
  return format(
      "staged through host memory: UCX here has no RDMA transport, and its "
      "own copies of %s memory are slower than staging",
      memory.c_str());
}

bool UcxLink::movesGpuMemory(MemoryKind kind) const {
  return takesGpuMemory(gpu_, kind);
}

std::string UcxLink::whyStagesGpuMemory(MemoryKind kind) const {
  return needlessStaging(gpu_, kind);
}

std::string UcxLink::gpuMemoryPath(MemoryKind kind) const {
  return ucxGpuMemoryPath(gpu_, kind);
}

std::shared_ptr<TransferRequest> UcxLink::sendGpu(MemoryKind kind,
                                                  const void* data,
                                                  size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece piece) {
  HETCCL_CHECK_ARG(movesGpuMemory(kind),
                   "ucx link to rank %d: a send of %s memory it cannot move",
                   peer_, describeMemoryKinds(kind).c_str());
  bytesSent_ += bytes;
  return post(sends_, static_cast<char*>(const_cast<void*>(data)), bytes, kind,
              call, piece);
}

std::shared_ptr<TransferRequest> UcxLink::recvGpu(MemoryKind kind, void* data,
                                                  size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece piece) {
  HETCCL_CHECK_ARG(movesGpuMemory(kind),
                   "ucx link from rank %d: a receive of %s memory it cannot "
                   "move",
                   peer_, describeMemoryKinds(kind).c_str());
  bytesReceived_ += bytes;
  return post(receives_, static_cast<char*>(data), bytes, kind, call, piece);
}

std::shared_ptr<TransferRequest> UcxLink::post(Direction& direction, char* data,
                                               size_t bytes, unsigned memory,
                                               const CallSignature& call,
                                               TransferPiece piece) {
  const bool sending = direction.kind == UcxWorkerThread::Direction::kSend;
  LanePlacement::Parts parts = placement_.placePiece(bytes, piece);
  parts.count = std::min<size_t>(parts.count, kMaxUcxParts);
  UcxTag tag;
  tag.linkSet = linkSet_;
  tag.sender = sending ? rank_ : peer_;
  tag.transfer = direction.transfers++;
  tag.parts = static_cast<unsigned>(parts.count);
  std::vector<std::shared_ptr<TransferRequest>> requests;
  // The call goes on the home lane, which both ends agree on however they
  // cut the transfer; a receive's check comes first in its request, so
  // that calls that disagree are reported before any size.
  UcxTag callTag = tag;
  callTag.part = kUcxCallPart;
  std::shared_ptr<PostedRequest> check;
  if (!sending)
    requests.push_back(check = std::make_shared<PostedRequest>(
                           TransferName{bytes, sending, peer_}));
  lanes_[placement_.home()]->postCall(peer_, direction.kind, callTag.value(),
                                      call, check);
  size_t offset = 0;
  for (tag.part = 0; tag.part < tag.parts; ++tag.part) {
    const size_t length = evenShare(bytes, tag.parts, tag.part);
    auto request =
        std::make_shared<PostedRequest>(TransferName{length, sending, peer_});
    lanes_[parts.laneOf(tag.part, lanes_.size())]->post(
        peer_, direction.kind, tag.value(), data + offset, length, memory,
        request);
    requests.push_back(std::move(request));
    offset += length;
  }
  return requestFor(std::move(requests));
}

uint64_t UcxLink::latestCallFrom() const {
  uint64_t latest = 0;
  for (const auto& lane : lanes_)
    latest = std::max(latest, lane->latestCallFrom(peer_));
  return latest;
}

}  // namespace hetccl
