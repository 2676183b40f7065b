#include "transport/shm/shm_ring_receiver.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "op/call_disagreement.h"
#include "runtime/host/host_reduce.h"
#include "transport/link.h"
#include "util/dtype.h"

namespace hetccl {

ShmRingReceiver::ShmRingReceiver(int rank, int peer, ShmRingView ring,
                                 ShmLinkControl& ownControl, AbortSignal& abort,
                                 std::shared_ptr<const CallLog> calls)
    : end_(rank, peer, ring),
      ownControl_(ownControl),
      abort_(abort),
      calls_(std::move(calls)) {}

std::shared_ptr<ShmTransfer> ShmRingReceiver::post(void* data, size_t bytes,
                                                   const CallSignature& call) {
  return end_.queue.post(end_.peer, static_cast<char*>(data), bytes,
                         /*sending=*/false, call);
}

std::shared_ptr<ShmTransfer> ShmRingReceiver::postCombining(
    void* data, const void* local, size_t bytes, const ReceiveCombine& combine,
    const CallSignature& call) {
  auto transfer = post(data, bytes, call);
  transfer->combineWith(static_cast<const char*>(local), combine);
  return transfer;
}

bool ShmRingReceiver::progress() {
  return end_.queue.progress([this](ShmTransfer& transfer, bool& progressed) {
    return pullChunks(transfer, progressed);
  });
}

bool ShmRingReceiver::pullChunks(ShmTransfer& transfer, bool& progressed) {
  while (transfer.remaining() > 0) {
    const ShmSlotHeader& header = end_.ring.header(end_.chunks);
    if (header.filled.load(std::memory_order_acquire) != end_.chunks + 1)
      return false;
    if (header.callDigest != transfer.callDigest()) {
      reportDisagreement(end_.ring.call(end_.chunks), transfer.call());
      return false;
    }
    if (header.sequence != transfer.sequence() ||
        header.messageBytes != transfer.bytes()) {
      reportMismatch(transfer, header);
      return false;
    }
    size_t n = std::min(end_.ring.chunkBytes(), transfer.remaining());
    deliver(transfer, end_.ring.data(end_.chunks, n), n);
    transfer.advance(n);
    raiseLatestCall(latestCall_, transfer.call());
    // Release: the slot is read before the sender may overwrite it.
    ownControl_.consumed.post(++end_.chunks);
    end_.bytes.fetch_add(n, std::memory_order_relaxed);
    progressed = true;
  }
  return true;
}

void ShmRingReceiver::deliver(ShmTransfer& transfer, const char* chunk,
                              size_t n) {
  char* into = transfer.buffer() + transfer.moved();
  const ReceiveCombine* combine = transfer.combine();
  if (combine == nullptr) {
    std::memcpy(into, chunk, n);
    return;
  }
  // Chunks and the transfer both hold whole elements: slots are multiples
  // of 64 bytes.
  const void* local = transfer.local() + transfer.moved();
  const void* sources[2] = {local, chunk};
  if (combine->incomingFirst) std::swap(sources[0], sources[1]);
  const size_t elt = dtypeSize(combine->reduction.dtype);
  hostReduce(into, sources, 2, n / elt, combine->reduction);
}

void ShmRingReceiver::checkUnclaimed() {
  if (!calls_ || !end_.queue.empty() || end_.queue.broken()) return;
  const ShmSlotHeader& header = end_.ring.header(end_.chunks);
  if (header.filled.load(std::memory_order_acquire) != end_.chunks + 1) return;
  const CallSignature sent = end_.ring.call(end_.chunks);
  raiseLatestCall(latestCall_, sent);
  if (sent.pointToPoint() || !calls_->made(sent.sequence)) return;
  std::optional<CallSignature> own = calls_->find(sent.sequence);
  if (own && !callsAgree(sent, *own)) reportDisagreement(sent, *own);
}

void ShmRingReceiver::reportMismatch(const ShmTransfer& transfer,
                                     const ShmSlotHeader& header) {
  uint64_t sequence = transfer.sequence();
  uint64_t posted = transfer.bytes();
  uint64_t sent = header.messageBytes;
  if (header.sequence > transfer.sequence()) {
    // The peer's messages up to this chunk's were empty (no chunks).
    sent = 0;
  } else if (header.sequence < transfer.sequence()) {
    // This rank's receive of that message was empty and completed at
    // once; the peer's message was not.
    sequence = header.sequence;
    posted = 0;
  }
  ownControl_.mismatchSizes.postedBytes = posted;
  ownControl_.mismatchSizes.sentBytes = sent;
  ownControl_.mismatch.post(sequence + 1);
  end_.queue.breakWith(Error(
      ncclInvalidUsage,
      format("size mismatch on the shm link from rank %d to rank %d: for "
             "message #%llu rank %d posted %llu bytes but the peer sent %llu; "
             "sizes of matched sends and receives must agree",
             end_.peer, end_.rank, static_cast<unsigned long long>(sequence),
             end_.rank, static_cast<unsigned long long>(posted),
             static_cast<unsigned long long>(sent))));
}

void ShmRingReceiver::reportDisagreement(const CallSignature& sent,
                                         const CallSignature& posted) {
  ownControl_.disagreementCalls.sent = sent;
  ownControl_.disagreementCalls.posted = posted;
  ownControl_.disagreement.post(1);
  Error error = callDisagreement(end_.peer, sent, end_.rank, posted);
  end_.queue.breakWith(error);
  abort_.raise(error.code(), error.what());
}

}  // namespace hetccl
