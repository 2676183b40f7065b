// The Link and the requests that users of the shm transport hold. Both
// keep the transport's engine (and so the shared mappings) alive: a link or
// request that outlives its transport stays safe to use.
#pragma once

#include <memory>

#include "transport/link.h"
#include "transport/shm/shm_link_progress.h"
#include "transport/shm/shm_transfer.h"

namespace hetccl {

class ShmRequest : public TransferRequest {
 public:
  ShmRequest(int peer, std::shared_ptr<ShmLinkProgress> engine,
             std::shared_ptr<ShmTransfer> transfer)
      : peer_(peer),
        engine_(std::move(engine)),
        transfer_(std::move(transfer)) {}

  bool done() override { return engine_->done(*transfer_); }
  void wait(const AbortSignal& abort, double timeoutSeconds) override {
    engine_->wait(*transfer_, abort, timeoutSeconds, peer_);
  }
  int peer() const override { return peer_; }
  TransferWay way() const override {
    return transfer_->sending() ? TransferWay::kSend : TransferWay::kReceive;
  }
  PieceCount pieces() const override { return engine_->piecesOf(*transfer_); }

 private:
  const int peer_;
  const std::shared_ptr<ShmLinkProgress> engine_;
  const std::shared_ptr<ShmTransfer> transfer_;
};

class ShmLink : public Link {
 public:
  // `index` is the link's place in the engine's rings.
  ShmLink(int peer, size_t index, std::shared_ptr<ShmLinkProgress> engine)
      : peer_(peer), index_(index), engine_(std::move(engine)) {}

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  // Each chunk is combined straight from its slot (ShmRingReceiver).
  bool reducesOnReceive() const override { return true; }
  std::shared_ptr<TransferRequest> recvReduce(
      void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
      const CallSignature& call, TransferPiece piece = {}) override;
  size_t bytesSent() const override { return engine_->bytesSent(index_); }
  size_t bytesReceived() const override {
    return engine_->bytesReceived(index_);
  }
  uint64_t latestCallFrom() const override {
    return engine_->latestCallFrom(index_);
  }

 private:
  const int peer_;
  const size_t index_;
  const std::shared_ptr<ShmLinkProgress> engine_;
};

}  // namespace hetccl
