#include "transport/shm/shm_link.h"

#include "util/error.h"

namespace hetccl {

std::shared_ptr<TransferRequest> ShmLink::send(const void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "shm link: a %zu-byte send to rank %d from a null buffer",
                   bytes, peer_);
  return std::make_shared<ShmRequest>(
      peer_, engine_, engine_->postSend(index_, data, bytes, call));
}

std::shared_ptr<TransferRequest> ShmLink::recv(void* data, size_t bytes,
                                               const CallSignature& call,
                                               TransferPiece) {
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "shm link: a %zu-byte receive from rank %d into a null "
                   "buffer",
                   bytes, peer_);
  return std::make_shared<ShmRequest>(
      peer_, engine_, engine_->postRecv(index_, data, bytes, call));
}

std::shared_ptr<TransferRequest> ShmLink::recvReduce(
    void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
    const CallSignature& call, TransferPiece) {
  HETCCL_CHECK_ARG((dst != nullptr && local != nullptr) || bytes == 0,
                   "shm link: a %zu-byte combining receive from rank %d with "
                   "a null buffer",
                   bytes, peer_);
  return std::make_shared<ShmRequest>(
      peer_, engine_,
      engine_->postRecvCombining(index_, dst, local, bytes, combine, call));
}

}  // namespace hetccl
