#include "transport/net/net_link.h"

#include "util/error.h"

namespace hetccl {

std::shared_ptr<TransferRequest> NetLink::send(const void* data, size_t bytes,
                                               const CallSignature& call) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "net link send of %zu bytes to rank %d: null buffer", bytes,
                   peer_);
  bytesSent_ += bytes;
  auto request =
      std::make_shared<PostedRequest>(TransferName{bytes, true, peer_});
  thread_->post(peer_, NetProgressThread::Direction::kSend, request,
                const_cast<void*>(data), bytes, call);
  return request;
}

std::shared_ptr<TransferRequest> NetLink::recv(void* data, size_t bytes,
                                               const CallSignature& call) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "net link receive of %zu bytes from rank %d: null buffer",
                   bytes, peer_);
  bytesReceived_ += bytes;
  auto request =
      std::make_shared<PostedRequest>(TransferName{bytes, false, peer_});
  thread_->post(peer_, NetProgressThread::Direction::kRecv, request, data,
                bytes, call);
  return request;
}

}  // namespace hetccl
