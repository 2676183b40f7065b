#include "transport/tcp/tcp_link.h"

#include <algorithm>

#include "transport/even_shares.h"
#include "transport/posted_request.h"
#include "transport/request_group.h"
#include "util/error.h"

namespace hetccl {

std::shared_ptr<TransferRequest> TcpLink::send(const void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "tcp link send of %zu bytes to rank %d: null buffer", bytes,
                   peer_);
  return post(TcpProgressThread::Direction::kSend,
              static_cast<char*>(const_cast<void*>(data)), bytes, call, sends_);
}

std::shared_ptr<TransferRequest> TcpLink::recv(void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "tcp link receive of %zu bytes from rank %d: null buffer",
                   bytes, peer_);
  return post(TcpProgressThread::Direction::kRecv, static_cast<char*>(data),
              bytes, call, receives_);
}

std::shared_ptr<TransferRequest> TcpLink::recvReduce(
    void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
    const CallSignature& call, TransferPiece) {
  HETCCL_CHECK_ARG((dst != nullptr && local != nullptr) || bytes == 0,
                   "tcp link combining receive of %zu bytes from rank %d: "
                   "null buffer",
                   bytes, peer_);
  HETCCL_CHECK_ARG(stripesHoldWholeElements_,
                   "tcp link from rank %d: a receive that combines needs "
                   "stripes of whole elements (HETCCL_TCP_CHUNK a multiple "
                   "of %zu bytes)",
                   peer_, StripedChannel::kMaxElementBytes);
  return post(TcpProgressThread::Direction::kRecv, static_cast<char*>(dst),
              bytes, call, receives_,
              ReceiveCombining{static_cast<const uint8_t*>(local), combine});
}

std::shared_ptr<TransferRequest> TcpLink::post(
    TcpProgressThread::Direction direction, char* data, size_t bytes,
    const CallSignature& call, std::atomic<uint64_t>& count,
    const std::optional<ReceiveCombining>& combining) {
  const LinkTransfer whole{count.fetch_add(1, std::memory_order_relaxed),
                           bytes};
  const size_t parts = placement_.partsOf(bytes);
  const bool sending = direction == TcpProgressThread::Direction::kSend;
  std::vector<std::shared_ptr<TransferRequest>> requests;
  size_t offset = 0;
  for (size_t part = 0; part < parts; ++part) {
    const size_t length = alignedShare(bytes, parts, part, kPartAlignment);
    auto request = std::make_shared<PostedRequest>(
        TransferName{length, sending, peer_},
        length <= kPolledBytes ? poll_ : std::chrono::microseconds(0));
    std::optional<ReceiveCombining> partCombining = combining;
    if (partCombining) partCombining->local += offset;
    lanes_[placement_.laneOf(part)]->post(channel_, direction, request,
                                          data + offset, length, whole, call,
                                          partCombining);
    requests.push_back(std::move(request));
    offset += length;
  }
  return requestFor(std::move(requests));
}

size_t TcpLink::bytesSent() const {
  return counters_->sent.load(std::memory_order_relaxed);
}

size_t TcpLink::bytesReceived() const {
  return counters_->received.load(std::memory_order_relaxed);
}

uint64_t TcpLink::latestCallFrom() const {
  return counters_->latestCall.load(std::memory_order_relaxed);
}

}  // namespace hetccl
