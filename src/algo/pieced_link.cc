#include "algo/pieced_link.h"

#include <algorithm>
#include <vector>

#include "transport/request_group.h"

namespace hetccl {

namespace {

constexpr size_t kPiecesPerTransfer = 4;
constexpr size_t kPage = 4096;

}  // namespace

size_t PiecedLink::pieceBytesFor(size_t pieceBytes, size_t bytes) {
  const size_t quarter = (bytes + kPiecesPerTransfer - 1) / kPiecesPerTransfer;
  const size_t aligned = (quarter + kPage - 1) / kPage * kPage;
  return std::min(pieceBytes, std::max(kMinPieceBytes, aligned));
}

template <typename Post>
std::shared_ptr<TransferRequest> PiecedLink::inPieces(size_t bytes, Post post) {
  std::vector<std::shared_ptr<TransferRequest>> pieces;
  forEachPiece(bytes, [&](size_t offset, size_t length, TransferPiece of) {
    pieces.push_back(post(offset, length, of));
  });
  return requestFor(std::move(pieces));
}

std::shared_ptr<TransferRequest> PiecedLink::send(const void* data,
                                                  size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece) {
  const auto* base = static_cast<const char*>(data);
  return inPieces(bytes, [&](size_t offset, size_t length, TransferPiece of) {
    return inner().send(base + offset, length, call, of);
  });
}

std::shared_ptr<TransferRequest> PiecedLink::recv(void* data, size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece) {
  auto* base = static_cast<char*>(data);
  return inPieces(bytes, [&](size_t offset, size_t length, TransferPiece of) {
    return inner().recv(base + offset, length, call, of);
  });
}

std::shared_ptr<TransferRequest> PiecedLink::recvReduce(
    void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
    const CallSignature& call, TransferPiece) {
  auto* into = static_cast<char*>(dst);
  const auto* own = static_cast<const char*>(local);
  return inPieces(bytes, [&](size_t offset, size_t length, TransferPiece of) {
    return inner().recvReduce(into + offset, own + offset, length, combine,
                              call, of);
  });
}

}  // namespace hetccl
