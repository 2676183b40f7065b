#include "transport/shm/shm_ring_sender.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "op/call_disagreement.h"
#include "transport/shm/process_memory.h"

namespace hetccl {

ShmRingSender::ShmRingSender(int rank, int peer, ShmRingView ring,
                             ShmLinkControl& peerControl, AbortSignal& abort,
                             bool sendsInPlace)
    : end_(rank, peer, ring),
      peerControl_(peerControl),
      abort_(abort),
      sendsInPlace_(sendsInPlace) {}

// Only messages larger than the ring: one that fits completes as soon as
// it is in the ring, without waiting for its receive, and stays so.
std::shared_ptr<ShmTransfer> ShmRingSender::post(const void* data, size_t bytes,
                                                 const CallSignature& call) {
  auto transfer = end_.queue.post(
      end_.peer, const_cast<char*>(static_cast<const char*>(data)), bytes,
      /*sending=*/true, call);
  if (sendsInPlace_ && bytes > end_.ring.slots() * end_.ring.chunkBytes() &&
      readableInPlace(data, bytes))
    transfer->markInPlace();
  return transfer;
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

bool ShmRingSender::slotFree() {
  if (end_.chunks < freeUntil_) return true;
  freeUntil_ = peerControl_.consumed.load() + end_.ring.slots();
  return end_.chunks < freeUntil_;
}

ShmSlotHeader& ShmRingSender::fillHeader(const ShmTransfer& transfer,
                                         uint64_t inPlaceAddress) {
  ShmSlotHeader& header = end_.ring.header(end_.chunks);
  header.sequence = transfer.sequence();
  header.messageBytes = transfer.bytes();
  header.callDigest = transfer.callDigest();
  header.inPlaceAddress = inPlaceAddress;
  end_.ring.call(end_.chunks) = transfer.call();
  return header;
}

bool ShmRingSender::pushChunks(ShmTransfer& transfer, bool& progressed) {
  if (transfer.inPlace()) return pushAddress(transfer, progressed);
  while (transfer.remaining() > 0) {
    if (!slotFree()) return false;
    size_t n = std::min(end_.ring.chunkBytes(), transfer.remaining());
    ShmSlotHeader& header = fillHeader(transfer, 0);
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

bool ShmRingSender::pushAddress(ShmTransfer& transfer, bool& progressed) {
  if (inPlaceChunk_ == 0) {
    if (!slotFree()) return false;
    ShmSlotHeader& header =
        fillHeader(transfer, reinterpret_cast<uint64_t>(transfer.buffer()));
    header.filled.store(++end_.chunks, std::memory_order_release);
    inPlaceChunk_ = end_.chunks;
    progressed = true;
  }
  if (peerControl_.consumed.load() < inPlaceChunk_) return false;
  inPlaceChunk_ = 0;
  transfer.advance(transfer.remaining());
  end_.bytes.fetch_add(transfer.bytes(), std::memory_order_relaxed);
  return true;
}

void ShmRingSender::withdraw() {
  if (inPlaceChunk_ == 0 || peerControl_.consumed.load() >= inPlaceChunk_)
    return;
  end_.ring.control().withdrawn.post(inPlaceChunk_);
  // Ahead of whatever the caller writes into the buffer once it hears that
  // the send failed: the peer fences between its last read and its look at
  // this counter, so it either sees the counter or read the message whole.
  std::atomic_thread_fence(std::memory_order_seq_cst);
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
  if (uint64_t failure = peerControl_.readFailure.load()) {
    end_.queue.breakWith(Error(
        ncclSystemError,
        format("shm link from rank %d to rank %d: the peer could not read a "
               "message from this rank's memory in place: %s (set "
               "HETCCL_SHM_SINGLE_COPY=0 to send through the ring)",
               end_.rank, end_.peer,
               std::strerror(static_cast<int>(failure)))));
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
