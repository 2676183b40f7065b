#include "transport/shm/shm_ring_sender.h"

#include <algorithm>
#include <cstring>

namespace hetccl {

ShmRingSender::ShmRingSender(int rank, int peer, ShmRingView ring,
                             ShmLinkControl& peerControl)
    : end_(rank, peer, ring), peerControl_(peerControl) {}

std::shared_ptr<ShmTransfer> ShmRingSender::post(const void* data,
                                                 size_t bytes) {
  return end_.queue.post(end_.peer,
                         const_cast<char*>(static_cast<const char*>(data)),
                         bytes, /*sending=*/true);
}

bool ShmRingSender::progress() {
  if (end_.queue.empty()) return false;
  if (!end_.queue.broken()) checkPeerReport();
  return end_.queue.progress([this](ShmTransfer& transfer, bool& progressed) {
    return pushChunks(transfer, progressed);
  });
}

bool ShmRingSender::pushChunks(ShmTransfer& transfer, bool& progressed) {
  uint64_t freeUntil = peerControl_.consumed.load() + end_.ring.slots();
  while (transfer.remaining() > 0) {
    if (end_.chunks >= freeUntil) {
      freeUntil = peerControl_.consumed.load() + end_.ring.slots();
      if (end_.chunks >= freeUntil) return false;
    }
    size_t n = std::min(end_.ring.chunkBytes(), transfer.remaining());
    ShmSlotHeader& header = end_.ring.header(end_.chunks);
    header.sequence = transfer.sequence();
    header.messageBytes = transfer.bytes();
    std::memcpy(end_.ring.data(end_.chunks, n),
                transfer.buffer() + transfer.moved(), n);
    transfer.advance(n);
    // Release: the peer that sees the flag sees the slot's contents.
    header.filled.store(++end_.chunks, std::memory_order_release);
    end_.bytes.fetch_add(n, std::memory_order_relaxed);
    progressed = true;
  }
  return true;
}

void ShmRingSender::checkPeerReport() {
  uint64_t report = peerControl_.mismatch.load();
  if (report == 0) return;
  end_.queue.breakWith(Error(
      ncclInvalidUsage,
      format("size mismatch on the shm link from rank %d to rank %d: for "
             "message #%llu rank %d posted %llu bytes but the peer (rank %d) "
             "sent %llu; sizes of matched sends and receives must agree",
             end_.rank, end_.peer, static_cast<unsigned long long>(report - 1),
             end_.peer,
             static_cast<unsigned long long>(
                 peerControl_.mismatchSizes.postedBytes),
             end_.rank,
             static_cast<unsigned long long>(
                 peerControl_.mismatchSizes.sentBytes))));
}

}  // namespace hetccl
