// The progress engine of a ucx link set: one thread that owns a UCX worker
// and makes every UCX call on it. Threads that post transfers queue them in
// an inbox and wake the thread through an eventfd; when nothing moves for a
// few microseconds the thread arms the worker and sleeps on UCX's wake-up
// event instead of spinning.
//
// Calls are compared here too (postCall): a send's call goes to the peer
// in a control message; the thread keeps a receive posted for the link
// set's control messages, and settles a receive's check once the peer's
// call is in. A peer's call that no check claims yet is compared with this
// rank's call of that number (call_log.h). Calls that disagree fail the
// check, send the peer a notice (so that it fails too, even with all its
// transfers done) and raise the abort signal.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "op/call_disagreement.h"
#include "op/call_log.h"
#include "transport/posted_request.h"
#include "transport/progress_inbox.h"
#include "transport/ucx/ucx_library.h"
#include "util/abort_signal.h"
#include "util/owned_fd.h"

namespace hetccl {

class UcxWorkerThread {
 public:
  enum class Direction { kSend, kRecv };

  // Creates the worker; throws ncclSystemError if UCX refuses. `calls`
  // (may be null) are this rank's.
  UcxWorkerThread(const UcxLibrary& ucx, int rank,
                  std::shared_ptr<AbortSignal> abort,
                  std::shared_ptr<const CallLog> calls = nullptr);
  // Stops the thread (see stop()).
  ~UcxWorkerThread();
  UcxWorkerThread(const UcxWorkerThread&) = delete;
  UcxWorkerThread& operator=(const UcxWorkerThread&) = delete;

  // The worker's address, for the peers' endpoints.
  std::vector<uint8_t> address() const;
  // Creates an endpoint to each peer's worker address and starts the
  // progress thread. Called once, before any post(). `linkSet`: the tags'
  // link-set byte (ucx_tag.h).
  void start(const std::map<int, std::vector<uint8_t>>& peerAddresses,
             uint8_t linkSet);
  // Hands a transfer with `tag` (transport/ucx/ucx_tag.h) of a buffer in
  // `memory` (a HETCCL_UCX_MEMORY_* bit) to the progress thread; after
  // stop(), or once `peer` was lost, it fails at once. A receive takes the
  // message whose tag matches in kUcxMatchMask and fails if its parts
  // count differs.
  void post(int peer, Direction direction, uint64_t tag, void* data,
            size_t bytes, unsigned memory,
            std::shared_ptr<PostedRequest> request);
  // The call of the transfer whose tag is `tag` (its part kUcxCallPart): a
  // send sends it (`request` may be null); a receive's `request` completes
  // once the peer's call is in and agrees with it, and fails with
  // ncclInvalidUsage naming both calls if they disagree.
  void postCall(int peer, Direction direction, uint64_t tag,
                const CallSignature& call,
                std::shared_ptr<PostedRequest> request);
  // The latest collective a call arriving from `peer` on this worker
  // belonged to (Link::latestCallFrom); 0 if none. Any thread, after
  // start().
  uint64_t latestCallFrom(int peer) const;
  // Stops and joins the progress thread: what is still pending fails,
  // what was sent is flushed to the peers (a few seconds at most), then
  // the endpoints and the worker go. Idempotent.
  void stop();

 private:
  struct Posted {
    int peer;
    Direction direction;
    uint64_t tag;
    void* data;
    size_t bytes;
    unsigned memory;
    std::shared_ptr<PostedRequest> request;  // null for control messages
    std::optional<CallSignature> call{};     // set for postCall's
  };
  enum class Role { kTransfer, kControlSend, kControlReceive };
  // A transfer in UCX's hands; its address is the completion's user data.
  struct Operation {
    UcxWorkerThread* engine;
    Posted posted;
    Role role = Role::kTransfer;
    hetcclUcxOperation* handle = nullptr;
    bool posting = false;    // inside tagSend/tagRecv
    bool completed = false;  // its request completed or failed
    uint8_t message[2 * kEncodedCallBytes] = {};  // a control message's
  };
  // A transfer of a peer, by its sender and number (20 bits).
  using TransferKey = std::pair<int, uint64_t>;
  struct Peer {
    UcxWorkerThread* engine;
    int rank;
    hetcclUcxEndpoint* endpoint = nullptr;
    int lostStatus = 0;  // UCX's status once the peer was lost
    bool lostHandled = false;
  };

  static void onCompletion(void* user, int status, size_t bytes, uint64_t tag);
  static void onPeerFailure(void* user, int status);

  void run();
  void loop();
  // Sleeps until UCX or a poster wakes the thread (or a few ms pass).
  void sleep();
  bool adoptPosted();
  void submit(Posted posted);
  void submitCall(Posted posted);
  // Posts one of the engine's own messages, which owns the bytes; null if
  // it could not.
  Operation* postControl(int peer, uint64_t tag, const uint8_t* message,
                         size_t bytes);
  void postControlReceive();
  void complete(Operation* operation, int status, size_t bytes, uint64_t tag);
  void onControlMessage(uint64_t tag, const uint8_t* message);
  // A peer's call for its transfer `key`: to the check waiting for it, or
  // kept and compared with this rank's own call of that number.
  void onPeerCall(const TransferKey& key, const CallSignature& call);
  void settle(const Posted& check, const CallSignature& peerCall);
  void checkUnclaimed(int peer, const CallSignature& call);
  void recheckUnclaimed();
  // Queues the notice and the abort (sent and raised by the loop, outside
  // UCX's callbacks); returns the error.
  Error disagree(int peer, const CallSignature& sent,
                 const CallSignature& posted);
  // Queues a notice to `peer`: its call, then this rank's.
  void queueNotice(int peer, const CallSignature& peerCall,
                   const CallSignature& ownCall);
  // Sends the queued notices (waiting a moment for them to leave), then
  // raises the abort signal.
  void sendNotices();
  // Whether the thread keeps its endpoints open after an abort: until the
  // peers it sent a notice have sent one back (they read it) or closed
  // theirs, or a grace
  // passes. Closing at once resets a tcp connection whose peer is still
  // sending, and the reset drops the notice unread.
  bool lingering() const;
  // Fails the checks of calls of `peer` (-1: every peer's).
  void failCallChecks(int peer, const Error& error);
  // Why a receive that completed cannot stand (its sizes differ from the
  // sender's), or nothing.
  std::optional<Error> sizeMismatch(const Posted& receive, size_t bytes,
                                    uint64_t tag) const;
  // Cancels what is pending with peers lost since the last call.
  void handleLostPeers();
  void failAndCancel(const std::vector<Operation*>& operations,
                     const Error& error);
  Error lostPeerError(const Peer& peer) const;
  // Fails everything pending and every later post with `reason`, then
  // tears the worker down.
  void shutDown(const Error& reason);
  void wake();

  const UcxLibrary& ucx_;
  const hetcclUcxModuleTable& table_;
  const int rank_;
  const std::shared_ptr<AbortSignal> abort_;
  const std::shared_ptr<const CallLog> calls_;
  uint8_t linkSet_ = 0;
  hetcclUcxWorker* worker_ = nullptr;
  std::map<int, std::unique_ptr<Peer>> peers_;
  // Per peer, made by start() and kept until the end: read by any thread.
  std::map<int, std::atomic<uint64_t>> latestCalls_;
  std::map<Operation*, std::unique_ptr<Operation>> pending_;
  bool anyPeerLost_ = false;  // set by onPeerFailure (progress thread)
  // The progress thread's record of calls.
  bool controlReceivePosted_ = false;
  std::map<TransferKey, Posted> callChecks_;  // waiting for the peer's call
  std::map<TransferKey, CallSignature> unclaimed_;  // peers' calls, unchecked
  std::vector<std::pair<int, CallSignature>> awaitingCalls_;   // by peer
  std::vector<std::pair<int, std::vector<uint8_t>>> notices_;  // to send
  std::optional<Error> disagreement_;  // to raise once they are sent
  std::vector<int> notified_;          // peers sent a notice
  std::vector<int> noticedBy_;         // peers that sent one here
  std::chrono::steady_clock::time_point lingerUntil_{};
  OwnedFd epoll_;
  OwnedFd wakeFd_;
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stopRequested_{false};

  ProgressInbox<Posted> inbox_;
  std::mutex stopMutex_;  // serialises stop()
  std::thread thread_;
};

}  // namespace hetccl
