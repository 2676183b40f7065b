// Transfers across domains travel in pieces: every transfer on a
// cross-domain link is cut into pieces of at most pieceBytes (the last
// one shorter), each one transfer of the link underneath, and an empty
// transfer is not sent at all. A transfer of less than four such pieces
// is cut into four (of at least kMinPieceBytes), so that one piece is on
// the wire while the next is staged even in small chunks. Both ends cut
// the same way whichever engine runs them (the GPU engine stages each
// piece through a slot of pieceBytes), so a CPU rank and a GPU rank match
// transfer for transfer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "transport/link.h"

namespace hetccl {

class PiecedLink : public LinkOver {
 public:
  PiecedLink(std::shared_ptr<Link> link, size_t pieceBytes)
      : LinkOver(std::move(link)), pieceBytes_(pieceBytes) {}

  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  bool reducesOnReceive() const override {
    return innerLink()->reducesOnReceive();
  }
  std::shared_ptr<TransferRequest> recvReduce(
      void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
      const CallSignature& call, TransferPiece piece = {}) override;

  static constexpr size_t kMinPieceBytes = 256 << 10;
  // The pieces of a transfer of `bytes` are this long (the last shorter),
  // on a link whose pieces are at most `pieceBytes` long.
  static size_t pieceBytesFor(size_t pieceBytes, size_t bytes);
  size_t pieceBytesFor(size_t bytes) const {
    return pieceBytesFor(pieceBytes_, bytes);
  }
  // Calls post(offset, length, TransferPiece) for each piece of a transfer
  // of `bytes`, in order.
  template <typename Post>
  void forEachPiece(size_t bytes, Post post) const {
    const size_t piece = pieceBytesFor(bytes);
    const auto count = static_cast<uint32_t>((bytes + piece - 1) / piece);
    uint32_t index = 0;
    for (size_t offset = 0; offset < bytes; offset += piece)
      post(offset, std::min(piece, bytes - offset),
           TransferPiece{index++, count});
  }

 private:
  template <typename Post>
  std::shared_ptr<TransferRequest> inPieces(size_t bytes, Post post);

  const size_t pieceBytes_;
};

}  // namespace hetccl
