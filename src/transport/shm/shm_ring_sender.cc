#include "transport/shm/shm_ring_sender.h"

#include <algorithm>
#include <cstring>

#include "op/call_disagreement.h"

namespace hetccl {

ShmRingSender::ShmRingSender(int rank, int peer, ShmRingView ring,
                             ShmLinkControl& peerControl, AbortSignal& abort)
    : end_(rank, peer, ring), peerControl_(peerControl), abort_(abort) {}

std::shared_ptr<ShmTransfer> ShmRingSender::post(const void* data, size_t bytes,
                                                 const CallSignature& call) {
  return end_.queue.post(end_.peer,
                         const_cast<char*>(static_cast<const char*>(data)),
                         bytes, /*sending=*/true, call);
}

// The reports are read even with nothing queued: a peer that found calls
// that disagree may be the only one to, after this rank's sends are done.
bool ShmRingSender::progress() {
  if (!end_.queue.broken()) checkPeerReports();
  if (end_.queue.empty()) return false;
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
    header.callDigest = transfer.callDigest();
    end_.ring.call(end_.chunks) = transfer.call();
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

void ShmRingSender::checkPeerReports() {
  if (peerControl_.disagreement.load() != 0) {
    const auto& calls = peerControl_.disagreementCalls;
    Error error =
        callDisagreement(end_.rank, calls.sent, end_.peer, calls.posted);
    end_.queue.breakWith(error);
    abort_.raise(error.code(), error.what());
    return;
  }
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
