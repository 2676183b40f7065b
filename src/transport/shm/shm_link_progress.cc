#include "transport/shm/shm_link_progress.h"

#include <chrono>

#include "util/spin_wait.h"

namespace hetccl {
namespace {

// Throws if `signal` is raised, naming the transfer that was pending.
void throwIfStopped(const AbortSignal& signal, const ShmTransfer& transfer,
                    const char* what) {
  if (!signal.raised()) return;
  ncclResult_t code = signal.code();
  fail(code == ncclSuccess ? ncclSystemError : code,
       "%s while waiting for %s: %s", what, transfer.description().c_str(),
       signal.reason().c_str());
}

}  // namespace

ShmLinkProgress::ShmLinkProgress(int rank, std::vector<ShmSegment> segments,
                                 const std::vector<ShmPeerRings>& rings,
                                 std::shared_ptr<AbortSignal> abort,
                                 std::shared_ptr<const PeerLiveness> liveness,
                                 std::shared_ptr<const CallLog> calls,
                                 bool progressThread)
    : segments_(std::move(segments)),
      abort_(std::move(abort)),
      liveness_(std::move(liveness)) {
  for (const ShmPeerRings& r : rings) {
    senders_.push_back(std::make_unique<ShmRingSender>(
        rank, r.peer, r.outgoing, r.incoming.control(), *abort_));
    receivers_.push_back(std::make_unique<ShmRingReceiver>(
        rank, r.peer, r.incoming, r.outgoing.control(), *abort_, calls));
  }
  if (progressThread)
    progressThread_ = std::thread([this] {
      try {
        runProgressThread();
      } catch (const std::exception& error) {
        // The waiters see it as the transport's abort.
        abort_->raise(ncclInternalError,
                      std::string("shm progress thread: ") + error.what());
      }
    });
}

ShmLinkProgress::~ShmLinkProgress() {
  if (!progressThread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  posted_.notify_one();
  progressThread_.join();
}

template <typename Post>
std::shared_ptr<ShmTransfer> ShmLinkProgress::postAndProgress(Post post) {
  std::shared_ptr<ShmTransfer> transfer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    transfer = post();
    progressAllLocked();
  }
  if (progressThread_.joinable()) posted_.notify_one();
  return transfer;
}

std::shared_ptr<ShmTransfer> ShmLinkProgress::postSend(
    size_t link, const void* data, size_t bytes, const CallSignature& call) {
  return postAndProgress(
      [&] { return senders_[link]->post(data, bytes, call); });
}

std::shared_ptr<ShmTransfer> ShmLinkProgress::postRecv(
    size_t link, void* data, size_t bytes, const CallSignature& call) {
  return postAndProgress(
      [&] { return receivers_[link]->post(data, bytes, call); });
}

std::shared_ptr<ShmTransfer> ShmLinkProgress::postRecvCombining(
    size_t link, void* data, const void* local, size_t bytes,
    const ReceiveCombine& combine, const CallSignature& call) {
  return postAndProgress([&] {
    return receivers_[link]->postCombining(data, local, bytes, combine, call);
  });
}

void ShmLinkProgress::poll() {
  std::lock_guard<std::mutex> lock(mutex_);
  progressAllLocked();
  for (auto& receiver : receivers_) receiver->checkUnclaimed();
}

PieceCount ShmLinkProgress::piecesOf(const ShmTransfer& transfer) {
  std::lock_guard<std::mutex> lock(mutex_);
  return {transfer.done() ? 1u : 0u, 1u};
}

bool ShmLinkProgress::done(const ShmTransfer& transfer) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The loss is read before progressing: a peer that wrote its last chunk
  // and exited just now has its data moved below, not reported lost.
  bool peerLost = liveness_ && liveness_->lost(transfer.peer());
  progressAllLocked();
  if (transfer.done()) return true;
  transfer.throwIfFailed();
  throwIfStopped(*abort_, transfer, "aborted");
  if (peerLost) liveness_->throwIfLost(transfer.peer());
  return false;
}

void ShmLinkProgress::wait(const ShmTransfer& transfer,
                           const AbortSignal& callerAbort,
                           double timeoutSeconds, int peer) {
  // A timeout raises the transport's abort, as every timed-out wait of the
  // library does: transfers cut off midway leave the links unusable.
  SpinWait backOff(*abort_, liveness_.get(), timeoutSeconds, "shm link", peer);
  while (!done(transfer)) {
    throwIfStopped(callerAbort, transfer, "aborted");
    try {
      backOff.pause();
    } catch (const Error& e) {
      // A timeout, or a signal raised since done() looked: name the
      // transfer, as done() does.
      fail(e.code(), "gave up waiting for %s: %s",
           transfer.description().c_str(), e.what());
    }
  }
}

bool ShmLinkProgress::progressAllLocked() {
  // Passes until nothing moves: a pass can free slots that the next pass
  // (or the peer, meanwhile) fills.
  bool any = false;
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (size_t i = 0; i < senders_.size(); ++i) {
      progressed |= senders_[i]->progress();
      progressed |= receivers_[i]->progress();
    }
    any |= progressed;
  }
  return any;
}

bool ShmLinkProgress::pendingLocked() const {
  for (size_t i = 0; i < senders_.size(); ++i)
    if (senders_[i]->pending() || receivers_[i]->pending()) return true;
  return false;
}

// Sleeps while nothing is posted (or the transport was aborted: the waiters
// end their transfers). While transfers wait for the peers, it backs off
// from yielding to short naps, and after about 5 ms of them to naps of a
// millisecond, so that a stopped or slow peer costs no core; a rank that
// waits moves its transfers itself meanwhile.
void ShmLinkProgress::runProgressThread() {
  constexpr int kSpins = 64;
  constexpr int kShortNaps = 256;
  constexpr auto kNap = std::chrono::microseconds(20);
  constexpr auto kLongNap = std::chrono::milliseconds(1);
  std::unique_lock<std::mutex> lock(mutex_);
  int idlePasses = 0;
  while (!stopping_) {
    if (abort_->raised() || !pendingLocked()) {
      posted_.wait(lock, [this] {
        return stopping_ || (!abort_->raised() && pendingLocked());
      });
      idlePasses = 0;
      continue;
    }
    idlePasses = progressAllLocked() ? 0 : idlePasses + 1;
    lock.unlock();
    if (idlePasses < kSpins)
      std::this_thread::yield();
    else if (idlePasses < kSpins + kShortNaps)
      std::this_thread::sleep_for(kNap);
    else
      std::this_thread::sleep_for(kLongNap);
    lock.lock();
  }
}

}  // namespace hetccl
