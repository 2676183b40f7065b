#include "transport/shm/shm_ring_receiver.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "op/call_disagreement.h"
#include "transport/link.h"
#include "transport/shm/process_memory.h"

namespace hetccl {

ShmRingReceiver::ShmRingReceiver(int rank, int peer, ShmRingView ring,
                                 ShmLinkControl& ownControl, AbortSignal& abort,
                                 std::shared_ptr<const CallLog> calls,
                                 uint64_t readsFromPid)
    : end_(rank, peer, ring),
      ownControl_(ownControl),
      abort_(abort),
      calls_(std::move(calls)),
      readsFromPid_(readsFromPid) {}

std::shared_ptr<ShmTransfer> ShmRingReceiver::post(void* data, size_t bytes,
                                                   const CallSignature& call) {
  return end_.queue.post(end_.peer, static_cast<char*>(data), bytes,
                         /*sending=*/false, call);
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
    if (header.inPlaceAddress != 0)
      return readInPlace(transfer, header, progressed);
    size_t n = std::min(end_.ring.chunkBytes(), transfer.remaining());
    std::memcpy(transfer.buffer() + transfer.moved(),
                end_.ring.data(end_.chunks, n), n);
    transfer.advance(n);
    raiseLatestCall(latestCall_, transfer.call());
    // Release: the slot is read before the sender may overwrite it.
    ownControl_.consumed.post(++end_.chunks);
    end_.bytes.fetch_add(n, std::memory_order_relaxed);
    progressed = true;
  }
  return true;
}

// A ring's bytes per pass, so that the rank's other links move between.
bool ShmRingReceiver::readInPlace(ShmTransfer& transfer,
                                  const ShmSlotHeader& header,
                                  bool& progressed) {
  if (readsFromPid_ == 0) {
    // The sender took this rank's probe for a success: a protocol error.
    reportReadFailure(transfer, EPERM);
    return false;
  }
  const size_t n = std::min(end_.ring.slots() * end_.ring.chunkBytes(),
                            transfer.remaining());
  const ssize_t got =
      readProcessMemory(readsFromPid_, header.inPlaceAddress + transfer.moved(),
                        transfer.buffer() + transfer.moved(), n);
  if (got <= 0) {
    reportReadFailure(transfer, got == 0 ? EFAULT : static_cast<int>(-got));
    return false;
  }
  transfer.advance(static_cast<size_t>(got));
  end_.bytes.fetch_add(static_cast<size_t>(got), std::memory_order_relaxed);
  progressed = true;
  if (transfer.remaining() > 0) return false;
  // After the last read: a sender that withdrew the message later sees
  // this slot consumed first (ShmRingSender::withdraw fences likewise).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (end_.ring.control().withdrawn.load() == end_.chunks + 1) {
    end_.queue.breakWith(
        Error(ncclRemoteError,
              format("shm link from rank %d to rank %d: rank %d gave up on its "
                     "%zu-byte message (aborted or timed out) while this rank "
                     "read it in place",
                     end_.peer, end_.rank, end_.peer, transfer.bytes())));
    return false;
  }
  raiseLatestCall(latestCall_, transfer.call());
  ownControl_.consumed.post(++end_.chunks);
  return true;
}

void ShmRingReceiver::reportReadFailure(const ShmTransfer& transfer,
                                        int error) {
  ownControl_.readFailure.post(static_cast<uint64_t>(error));
  end_.queue.breakWith(Error(
      ncclSystemError,
      format("shm link from rank %d to rank %d: reading message #%llu (%s) "
             "from rank %d's memory in place failed: %s (set "
             "HETCCL_SHM_SINGLE_COPY=0 to send through the ring)",
             end_.peer, end_.rank,
             static_cast<unsigned long long>(transfer.sequence()),
             transfer.description().c_str(), end_.peer, std::strerror(error))));
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
