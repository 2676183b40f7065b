// The shared progress of every link of one shm transport. Whoever asks
// whether a transfer is done, or waits for one, moves every pending
// transfer of every link as far as it can, under one mutex; so does
// posting a transfer, so that a message that fits in the ring leaves at
// once even if its sender looks away before waiting for it. So two
// ranks that each post a send larger than a ring and then a receive, and
// wait on the send, drain each other's rings and both finish.
//
// Where cores are to spare (HETCCL_SHM_LINK_THREAD), a progress thread
// also moves them in the background: a plan that posts a chunk's
// transfers and then runs the next chunk's domain step or reduction would
// otherwise move nothing past the ring's first slots until it waits. The
// thread sleeps while nothing is posted and backs off while the peers have
// nothing for it.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "op/call_log.h"
#include "op/waiting_call.h"
#include "shm/shm_segment.h"
#include "transport/shm/shm_link_layout.h"
#include "transport/shm/shm_ring_receiver.h"
#include "transport/shm/shm_ring_sender.h"
#include "transport/shm/shm_transfer.h"
#include "util/abort_signal.h"
#include "util/peer_liveness.h"

namespace hetccl {

// The two rings of this rank's link to `peer`.
struct ShmPeerRings {
  int peer;
  ShmRingView outgoing;  // this rank's region for the peer
  ShmRingView incoming;  // the peer's region for this rank
};

class ShmLinkProgress {
 public:
  // Keeps `segments` mapped for as long as the engine lives. `abort` ends
  // every wait, and is raised on calls that disagree; `liveness` ends the
  // waits of transfers whose peer exited; `calls` (may be null) are this
  // rank's, for poll().
  ShmLinkProgress(int rank, std::vector<ShmSegment> segments,
                  const std::vector<ShmPeerRings>& rings,
                  std::shared_ptr<AbortSignal> abort,
                  std::shared_ptr<const PeerLiveness> liveness,
                  std::shared_ptr<const CallLog> calls,
                  bool progressThread = false);
  // Stops the progress thread, if any.
  ~ShmLinkProgress();
  ShmLinkProgress(const ShmLinkProgress&) = delete;
  ShmLinkProgress& operator=(const ShmLinkProgress&) = delete;

  // Queue a transfer and progress everything. `link` indexes the rings
  // given to the constructor.
  std::shared_ptr<ShmTransfer> postSend(size_t link, const void* data,
                                        size_t bytes,
                                        const CallSignature& call);
  std::shared_ptr<ShmTransfer> postRecv(size_t link, void* data, size_t bytes,
                                        const CallSignature& call);
  std::shared_ptr<ShmTransfer> postRecvCombining(size_t link, void* data,
                                                 const void* local,
                                                 size_t bytes,
                                                 const ReceiveCombine& combine,
                                                 const CallSignature& call);
  // Progresses everything and compares the calls of the peers' messages
  // that no receive waits for with this rank's: no thread of the transport
  // does, and a rank whose transfers are all done may otherwise never see
  // that a peer's call disagrees with its own.
  void poll();

  // Progresses everything, then: true if `transfer` is complete; throws
  // if it failed, or if it is pending and the transport was aborted or a
  // peer was lost.
  bool done(const ShmTransfer& transfer);
  // Whether `transfer` is complete, as 1 piece; moves nothing (any thread).
  PieceCount piecesOf(const ShmTransfer& transfer);
  // Alternates done() with back-off pauses. Also ends on `callerAbort`, and
  // after `timeoutSeconds` (> 0) by raising the transport's abort.
  void wait(const ShmTransfer& transfer, const AbortSignal& callerAbort,
            double timeoutSeconds, int peer);

  size_t bytesSent(size_t link) const { return senders_[link]->bytesSent(); }
  size_t bytesReceived(size_t link) const {
    return receivers_[link]->bytesReceived();
  }
  uint64_t latestCallFrom(size_t link) const {
    return receivers_[link]->latestCall();
  }

 private:
  // True if anything moved or ended.
  bool progressAllLocked();
  bool pendingLocked() const;
  // Queues a transfer, moves what it can and wakes the progress thread.
  template <typename Post>
  std::shared_ptr<ShmTransfer> postAndProgress(Post post);
  void runProgressThread();

  std::mutex mutex_;
  std::condition_variable posted_;  // for the progress thread
  bool stopping_ = false;           // under mutex_
  std::vector<ShmSegment> segments_;
  std::vector<std::unique_ptr<ShmRingSender>> senders_;
  std::vector<std::unique_ptr<ShmRingReceiver>> receivers_;
  const std::shared_ptr<AbortSignal> abort_;
  const std::shared_ptr<const PeerLiveness> liveness_;
  std::thread progressThread_;  // last: it uses the members above
};

}  // namespace hetccl
