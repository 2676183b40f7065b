#include "algo/pieced_link.h"

#include <algorithm>
#include <vector>

#include "transport/request_group.h"

namespace hetccl {

template <typename Post>
std::shared_ptr<TransferRequest> PiecedLink::inPieces(size_t bytes, Post post) {
  std::vector<std::shared_ptr<TransferRequest>> pieces;
  for (size_t offset = 0; offset < bytes; offset += pieceBytes_)
    pieces.push_back(post(offset, std::min(pieceBytes_, bytes - offset)));
  return requestFor(std::move(pieces));
}

std::shared_ptr<TransferRequest> PiecedLink::send(const void* data,
                                                  size_t bytes) {
  const auto* base = static_cast<const char*>(data);
  return inPieces(bytes, [&](size_t offset, size_t length) {
    return inner().send(base + offset, length);
  });
}

std::shared_ptr<TransferRequest> PiecedLink::recv(void* data, size_t bytes) {
  auto* base = static_cast<char*>(data);
  return inPieces(bytes, [&](size_t offset, size_t length) {
    return inner().recv(base + offset, length);
  });
}

}  // namespace hetccl
