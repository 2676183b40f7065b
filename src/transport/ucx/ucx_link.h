// The Link that users of the ucx transport hold. Each transfer is one or
// more UCX tagged messages (tags: ucx_tag.h), placed by LanePlacement::
// placePiece: a transfer on its own in parts of at least `splitBytes`, one
// per lane at most, the first on the pair's home lane; a piece of a larger
// transfer whole on lane home + its index; parts of at most `partBytes`
// either way (up to kMaxUcxParts of them). The signature of a transfer's call
// travels in a control message on the home lane too, and a receive completes
// only once that lane compared it with its own (UcxWorkerThread::postCall).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/lane_placement.h"
#include "transport/link.h"
#include "transport/ucx/ucx_settings.h"
#include "transport/ucx/ucx_tag.h"
#include "transport/ucx/ucx_worker_thread.h"

namespace hetccl {

// Which GPU buffers a ucx link takes as they are: HETCCL_UCX_GPU, the
// memory types (MemoryKind bits) UCX reports here, and whether it has an
// RDMA transport.
struct UcxGpuPolicy {
  GpuBuffers mode = GpuBuffers::kAuto;
  unsigned ucxMemory = kHostMemory;
  bool rdma = false;
};

// Whether a ucx link under `policy` takes buffers in GPU memory of `kind`
// as they are (UcxLink::movesGpuMemory). Throws ncclInvalidUsage where
// HETCCL_UCX_GPU=1 asks for a memory type UCX does not list.
bool takesGpuMemory(const UcxGpuPolicy& policy, MemoryKind kind);
// Why a ucx link under `policy` stages buffers in memory of `kind` that
// `auto` would hand to UCX as they are (HETCCL_UCX_GPU=0), and what to set
// instead; empty otherwise (UcxLink::whyStagesGpuMemory).
std::string needlessStaging(const UcxGpuPolicy& policy, MemoryKind kind);
// Where a ucx link under `policy` puts buffers in memory of `kind` and why
// (UcxLink::gpuMemoryPath).
std::string ucxGpuMemoryPath(const UcxGpuPolicy& policy, MemoryKind kind);

class UcxLink : public Link {
 public:
  UcxLink(int rank, int peer, uint8_t linkSet,
          std::vector<std::shared_ptr<UcxWorkerThread>> lanes,
          size_t splitBytes, size_t partBytes, UcxGpuPolicy gpu = {});

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  // HETCCL_UCX_GPU=auto: where UCX reports the memory type and has an
  // RDMA transport to reach it without copies (GPUDirect); 1: wherever it
  // reports the type; 0: never. (A GPU emulated on the host has host
  // memory, which UCX always moves, unless HETCCL_UCX_GPU=0.)
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
  const int rank_;
  const int peer_;
  const uint8_t linkSet_;
  const UcxGpuPolicy gpu_;
  const LanePlacement placement_;
  // One direction's transfers: their number is in their tags.
  struct Direction {
    UcxWorkerThread::Direction kind;
    std::atomic<uint64_t> transfers{0};  // posted this way
    explicit Direction(UcxWorkerThread::Direction kind) : kind(kind) {}
  };

  // `memory`: a MemoryKind bit.
  std::shared_ptr<TransferRequest> post(Direction& direction, char* data,
                                        size_t bytes, unsigned memory,
                                        const CallSignature& call,
                                        TransferPiece piece);

  // Kept alive, so that a link that outlives its transport fails new
  // transfers instead of crashing.
  const std::vector<std::shared_ptr<UcxWorkerThread>> lanes_;
  Direction sends_;
  Direction receives_;
  std::atomic<size_t> bytesSent_{0};  // counted when posted
  std::atomic<size_t> bytesReceived_{0};
};

}  // namespace hetccl
