#include "transport/ucx/ucx_link.h"

#include "util/error.h"

namespace hetccl {

uint64_t ucxTag(uint8_t linkSet, int sender, uint64_t number) {
  constexpr uint64_t kNumberMask = (uint64_t{1} << 36) - 1;
  return (uint64_t{linkSet} << 56) | (static_cast<uint64_t>(sender) << 36) |
         (number & kNumberMask);
}

std::shared_ptr<TransferRequest> UcxLink::send(const void* data, size_t bytes) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "ucx link send of %zu bytes to rank %d: null buffer", bytes,
                   peer_);
  auto request = std::make_shared<PostedRequest>(
      format("a %zu-byte send to rank %d", bytes, peer_));
  engine_->post(peer_, UcxEngine::Direction::kSend,
                ucxTag(linkSet_, rank_, sends_++), const_cast<void*>(data),
                bytes, request);
  bytesSent_ += bytes;
  return request;
}

std::shared_ptr<TransferRequest> UcxLink::recv(void* data, size_t bytes) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "ucx link receive of %zu bytes from rank %d: null buffer",
                   bytes, peer_);
  auto request = std::make_shared<PostedRequest>(
      format("a %zu-byte receive from rank %d", bytes, peer_));
  engine_->post(peer_, UcxEngine::Direction::kRecv,
                ucxTag(linkSet_, peer_, receives_++), data, bytes, request);
  bytesReceived_ += bytes;
  return request;
}

}  // namespace hetccl
