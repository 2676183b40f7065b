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
  const size_t piece = pieceBytesFor(bytes);
  std::vector<std::shared_ptr<TransferRequest>> pieces;
  for (size_t offset = 0; offset < bytes; offset += piece)
    pieces.push_back(post(offset, std::min(piece, bytes - offset)));
  return requestFor(std::move(pieces));
}

std::shared_ptr<TransferRequest> PiecedLink::send(const void* data,
                                                  size_t bytes,
                                                  const CallSignature& call) {
  const auto* base = static_cast<const char*>(data);
  return inPieces(bytes, [&](size_t offset, size_t length) {
    return inner().send(base + offset, length, call);
  });
}

std::shared_ptr<TransferRequest> PiecedLink::recv(void* data, size_t bytes,
                                                  const CallSignature& call) {
  auto* base = static_cast<char*>(data);
  return inPieces(bytes, [&](size_t offset, size_t length) {
    return inner().recv(base + offset, length, call);
  });
}

std::shared_ptr<TransferRequest> PiecedLink::recvReduce(
    void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
    const CallSignature& call) {
  auto* into = static_cast<char*>(dst);
  const auto* own = static_cast<const char*>(local);
  return inPieces(bytes, [&](size_t offset, size_t length) {
    return inner().recvReduce(into + offset, own + offset, length, combine,
                              call);
  });
}

}  // namespace hetccl
