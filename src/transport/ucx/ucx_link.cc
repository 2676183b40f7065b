#include "transport/ucx/ucx_link.h"

#include <algorithm>

#include "transport/request_group.h"
#include "util/error.h"

namespace hetccl {

UcxLink::UcxLink(int rank, int peer, uint8_t linkSet,
                 std::vector<std::shared_ptr<UcxEngine>> lanes,
                 size_t partBytes)
    : rank_(rank),
      peer_(peer),
      linkSet_(linkSet),
      partBytes_(partBytes),
      lanes_(std::move(lanes)),
      sends_(UcxEngine::Direction::kSend),
      receives_(UcxEngine::Direction::kRecv) {}

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

size_t UcxLink::partsOf(size_t bytes) const {
  const size_t lanes = lanes_.size();
  if (bytes < lanes * kUcxSplitBytes) return 1;
  const size_t parts = (bytes + partBytes_ - 1) / partBytes_;
  return std::clamp(parts, lanes, size_t{kMaxUcxParts});
}

std::shared_ptr<TransferRequest> UcxLink::post(Direction& direction, char* data,
                                               size_t bytes) {
  const bool sending = direction.kind == UcxEngine::Direction::kSend;
  UcxTag tag;
  tag.linkSet = linkSet_;
  tag.sender = sending ? rank_ : peer_;
  tag.transfer = direction.transfers++;
  tag.parts = static_cast<unsigned>(partsOf(bytes));
  const size_t lanes = lanes_.size();
  std::vector<std::shared_ptr<TransferRequest>> requests;
  size_t offset = 0;
  for (tag.part = 0; tag.part < tag.parts; ++tag.part) {
    // Even shares, the first ones a byte longer where it does not divide.
    const size_t length =
        bytes / tag.parts + (tag.part < bytes % tag.parts ? 1 : 0);
    const size_t lane =
        tag.parts == 1 ? tag.transfer % lanes : tag.part % lanes;
    auto request =
        std::make_shared<PostedRequest>(TransferName{length, sending, peer_});
    lanes_[lane]->post(peer_, direction.kind, tag.value(), data + offset,
                       length, request);
    requests.push_back(std::move(request));
    offset += length;
  }
  return requestFor(std::move(requests));
}

}  // namespace hetccl
