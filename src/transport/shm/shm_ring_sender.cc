#include "transport/shm/shm_ring_sender.h"

#include <algorithm>
#include <cstring>

namespace hetccl {

ShmRingSender::ShmRingSender(int rank, int peer, ShmRingView ring,
                             ShmLinkControl& peerControl)
    : rank_(rank), peer_(peer), ring_(ring), peerControl_(peerControl) {}

std::shared_ptr<ShmTransfer> ShmRingSender::post(const void* data,
                                                 size_t bytes) {
  return queue_.post(peer_, const_cast<char*>(static_cast<const char*>(data)),
                     bytes, format("a %zu-byte send to rank %d", bytes, peer_));
}

bool ShmRingSender::progress() {
  if (queue_.empty()) return false;
  if (!queue_.broken()) checkPeerReport();
  return queue_.progress([this](ShmTransfer& transfer, bool& progressed) {
    return pushChunks(transfer, progressed);
  });
}

bool ShmRingSender::pushChunks(ShmTransfer& transfer, bool& progressed) {
  uint64_t freeUntil = peerControl_.consumed.load() + ring_.slots();
  while (transfer.remaining() > 0) {
    if (chunksSent_ >= freeUntil) {
      freeUntil = peerControl_.consumed.load() + ring_.slots();
      if (chunksSent_ >= freeUntil) return false;
    }
    size_t n = std::min(ring_.chunkBytes(), transfer.remaining());
    ShmSlotHeader& header = ring_.header(chunksSent_);
    header.sequence = transfer.sequence();
    header.messageBytes = transfer.bytes();
    std::memcpy(ring_.data(chunksSent_), transfer.buffer() + transfer.moved(),
                n);
    transfer.advance(n);
    // Release: the peer that sees the count sees the slot's contents.
    ring_.control().sent.post(++chunksSent_);
    bytesSent_.fetch_add(n, std::memory_order_relaxed);
    progressed = true;
  }
  return true;
}

void ShmRingSender::checkPeerReport() {
  uint64_t report = peerControl_.mismatch.load();
  if (report == 0) return;
  queue_.breakWith(Error(
      ncclInvalidUsage,
      format("size mismatch on the shm link from rank %d to rank %d: for "
             "message #%llu rank %d posted %llu bytes but the peer (rank %d) "
             "sent %llu; sizes of matched sends and receives must agree",
             rank_, peer_, static_cast<unsigned long long>(report - 1), peer_,
             static_cast<unsigned long long>(
                 peerControl_.mismatchSizes.postedBytes),
             rank_,
             static_cast<unsigned long long>(
                 peerControl_.mismatchSizes.sentBytes))));
}

}  // namespace hetccl
