#include "transport/ucx/ucx_link.h"

#include "transport/request_group.h"
#include "util/error.h"

namespace hetccl {

uint64_t ucxTag(uint8_t linkSet, int sender, uint64_t number) {
  constexpr uint64_t kNumberMask = (uint64_t{1} << 36) - 1;
  return (uint64_t{linkSet} << 56) | (static_cast<uint64_t>(sender) << 36) |
         (number & kNumberMask);
}

UcxLink::UcxLink(int rank, int peer, uint8_t linkSet,
                 std::vector<std::shared_ptr<UcxEngine>> lanes)
    : rank_(rank),
      peer_(peer),
      linkSet_(linkSet),
      lanes_(std::move(lanes)),
      sends_(UcxEngine::Direction::kSend, lanes_.size()),
      receives_(UcxEngine::Direction::kRecv, lanes_.size()) {}

std::shared_ptr<TransferRequest> UcxLink::send(const void* data, size_t bytes) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "ucx link send of %zu bytes to rank %d: null buffer", bytes,
                   peer_);
  bytesSent_ += bytes;
  return post(sends_, static_cast<char*>(const_cast<void*>(data)), bytes);
}

std::shared_ptr<TransferRequest> UcxLink::recv(void* data, size_t bytes) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "ucx link receive of %zu bytes from rank %d: null buffer",
                   bytes, peer_);
  bytesReceived_ += bytes;
  return post(receives_, static_cast<char*>(data), bytes);
}

std::shared_ptr<TransferRequest> UcxLink::post(Direction& direction, char* data,
                                               size_t bytes) {
  const bool sending = direction.kind == UcxEngine::Direction::kSend;
  const int sender = sending ? rank_ : peer_;
  const uint64_t number = direction.transfers++;
  const size_t lanes = lanes_.size();
  const size_t parts = bytes >= lanes * kUcxSplitBytes ? lanes : 1;
  std::vector<std::shared_ptr<TransferRequest>> requests;
  size_t offset = 0;
  for (size_t part = 0; part < parts; ++part) {
    // Even shares, the first ones a byte longer where it does not divide.
    const size_t length = bytes / parts + (part < bytes % parts ? 1 : 0);
    const size_t lane = parts == 1 ? number % lanes : part;
    auto request = std::make_shared<PostedRequest>(
        format("a %zu-byte %s rank %d", length,
               sending ? "send to" : "receive from", peer_));
    lanes_[lane]->post(peer_, direction.kind,
                       ucxTag(linkSet_, sender, direction.parts[lane]++),
                       data + offset, length, request);
    requests.push_back(std::move(request));
    offset += length;
  }
  return requestFor(std::move(requests));
}

}  // namespace hetccl
