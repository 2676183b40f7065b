#include "transport/tcp/tcp_link.h"

#include "transport/tcp/tcp_request.h"
#include "util/error.h"

namespace hetccl {

std::shared_ptr<TransferRequest> TcpLink::send(const void* data, size_t bytes) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "tcp link send of %zu bytes to rank %d: null buffer", bytes,
                   peer_);
  auto request = std::make_shared<TcpRequest>(
      format("a %zu-byte send to rank %d", bytes, peer_));
  engine_->post(channel_, TcpEngine::Direction::kSend, request,
                const_cast<void*>(data), bytes);
  return request;
}

std::shared_ptr<TransferRequest> TcpLink::recv(void* data, size_t bytes) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "tcp link receive of %zu bytes from rank %d: null buffer",
                   bytes, peer_);
  auto request = std::make_shared<TcpRequest>(
      format("a %zu-byte receive from rank %d", bytes, peer_));
  engine_->post(channel_, TcpEngine::Direction::kRecv, request, data, bytes);
  return request;
}

size_t TcpLink::bytesSent() const {
  return counters_->sent.load(std::memory_order_relaxed);
}

size_t TcpLink::bytesReceived() const {
  return counters_->received.load(std::memory_order_relaxed);
}

}  // namespace hetccl
