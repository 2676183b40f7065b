// A point-to-point link between two ranks, for the cross-domain steps of
// heterogeneous plans. Transfers posted in one direction are matched with
// the peer's transfers in the same order (sizes must agree); they may
// complete in any order (a tcp link moves them on several lanes).
//
// Every transfer names the user call it belongs to. The sender's
// signature travels with the transfer and the receiving end compares it
// with its own (callsAgree): calls that disagree fail the transfer, and
// the peer's, with ncclInvalidUsage naming both calls, and raise the
// transport's abort signal, since the ranks are out of step (also when no
// transfer of this rank waits any more). A disagreement is reported
// instead of any size mismatch it causes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "op/call_signature.h"
#include "op/waiting_call.h"
#include "runtime/memory_kind.h"
#include "runtime/reduction.h"
#include "transport/transfer_piece.h"
#include "util/abort_signal.h"

namespace hetccl {

// How a receive combines what arrives with a local buffer (recvReduce):
// `reduction` over 2 sources, in the order the plan would combine them.
struct ReceiveCombine {
  Reduction reduction;
  bool incomingFirst = false;  // (incoming, local), else (local, incoming)
};

class TransferRequest : public PieceSource {
 public:
  // True once the transfer is complete: a send's buffer may be reused, a
  // receive's buffer holds the bytes. Throws the link's error if it failed.
  virtual bool done() = 0;
  // Waits for done(); throws if `abort` is raised, the link fails, or
  // `timeoutSeconds` (> 0) pass (ncclRemoteError: the peer is silent).
  virtual void wait(const AbortSignal& abort, double timeoutSeconds) = 0;
  // The rank at the other end, for the call probe (op/waiting_call.h);
  // -1 where the request knows none.
  virtual int peer() const { return -1; }
  // For the stall reports: which way it goes, and how many of its pieces
  // are done (any thread, while another waits); unknown by default.
  virtual TransferWay way() const { return TransferWay::kUnknown; }
  PieceCount pieces() const override { return {}; }
};

class Link {
 public:
  virtual ~Link() = default;
  virtual int peer() const = 0;
  // The caller keeps the buffer alive and untouched until the request is
  // done. `call`: the user call the transfer belongs to; `piece`: its
  // place in a larger transfer, the same at both ends (every override
  // declares the same default, a transfer on its own).
  virtual std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                                const CallSignature& call,
                                                TransferPiece piece = {}) = 0;
  virtual std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                                const CallSignature& call,
                                                TransferPiece piece = {}) = 0;
  // Whether the link moves buffers in GPU memory of `kind` itself (UCX
  // with GPUDirect), so that the GPU engine hands them over as they are
  // instead of staging them through host memory. Throws ncclInvalidUsage
  // when the user demanded that and the link cannot.
  virtual bool movesGpuMemory(MemoryKind kind) const;
  // Why the link stages buffers in GPU memory of `kind` that it could take
  // as they are (a setting said so), and what to set instead; empty when
  // it takes them or cannot.
  virtual std::string whyStagesGpuMemory(MemoryKind kind) const;
  // Where the GPU engine's buffers in GPU memory of `kind` go on this link
  // and why, in words for the doctor and hetcclCommGpuBuffers ("staged
  // through host memory: ..."); by default the link carries host memory
  // only.
  virtual std::string gpuMemoryPath(MemoryKind kind) const;
  // Transfers of buffers in GPU memory of `kind`, on a link that
  // movesGpuMemory(kind). They match the peer's transfers like send() and
  // recv(), whatever memory the peer's side is in.
  virtual std::shared_ptr<TransferRequest> sendGpu(MemoryKind kind,
                                                   const void* data,
                                                   size_t bytes,
                                                   const CallSignature& call,
                                                   TransferPiece piece = {});
  virtual std::shared_ptr<TransferRequest> recvGpu(MemoryKind kind, void* data,
                                                   size_t bytes,
                                                   const CallSignature& call,
                                                   TransferPiece piece = {});
  // Whether the link combines a receive's bytes with a local buffer as they
  // arrive (recvReduce): host memory only.
  virtual bool reducesOnReceive() const { return false; }
  // A receive of `bytes` that ends as dst = `local` (op) the bytes that
  // arrive (ReceiveCombine), instead of the bytes themselves: the
  // reduction a plan would run after receiving into scratch, without the
  // scratch. `dst` may be `local`. On a link that reducesOnReceive().
  virtual std::shared_ptr<TransferRequest> recvReduce(
      void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
      const CallSignature& call, TransferPiece piece = {});
  // Bytes this side has sent and received over the link so far.
  virtual size_t bytesSent() const = 0;
  virtual size_t bytesReceived() const = 0;
  // The number of the latest collective that a transfer arriving from the
  // peer belonged to, as far as this side has seen (0: none yet), for the
  // stall reports. Any thread.
  virtual uint64_t latestCallFrom() const { return 0; }
};

// Raises `latest` (a link's latestCallFrom) to `call`'s number where the
// call is a collective of a later number: one compare on a receive path,
// a store only when a new call arrives. Several threads may raise it.
inline void raiseLatestCall(std::atomic<uint64_t>& latest,
                            const CallSignature& call) {
  if (call.pointToPoint()) return;
  uint64_t seen = latest.load(std::memory_order_relaxed);
  while (call.sequence > seen &&
         !latest.compare_exchange_weak(seen, call.sequence,
                                       std::memory_order_relaxed)) {
  }
}

// A link over another one that changes how transfers travel (cut into
// pieces, staged through host memory); the peer and the byte counts are
// the inner link's.
class LinkOver : public Link {
 public:
  explicit LinkOver(std::shared_ptr<Link> inner) : inner_(std::move(inner)) {}

  int peer() const override { return inner_->peer(); }
  // The link underneath.
  const std::shared_ptr<Link>& innerLink() const { return inner_; }
  size_t bytesSent() const override { return inner_->bytesSent(); }
  size_t bytesReceived() const override { return inner_->bytesReceived(); }
  uint64_t latestCallFrom() const override { return inner_->latestCallFrom(); }

 protected:
  Link& inner() const { return *inner_; }

 private:
  std::shared_ptr<Link> inner_;
};

}  // namespace hetccl
