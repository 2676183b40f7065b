// The progress engine of a ucx link set: one thread that owns a UCX worker
// and makes every UCX call on it. Threads that post transfers queue them in
// an inbox and wake the thread through an eventfd; when nothing moves for a
// few microseconds the thread arms the worker and sleeps on UCX's wake-up
// event instead of spinning.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "transport/posted_request.h"
#include "transport/ucx/ucx_library.h"
#include "util/abort_signal.h"
#include "util/owned_fd.h"

namespace hetccl {

class UcxEngine {
 public:
  enum class Direction { kSend, kRecv };

  // Creates the worker; throws ncclSystemError if UCX refuses.
  UcxEngine(const UcxLibrary& ucx, int rank,
            std::shared_ptr<AbortSignal> abort);
  // Stops the thread (see stop()).
  ~UcxEngine();
  UcxEngine(const UcxEngine&) = delete;
  UcxEngine& operator=(const UcxEngine&) = delete;

  // The worker's address, for the peers' endpoints.
  std::vector<uint8_t> address() const;
  // Creates an endpoint to each peer's worker address and starts the
  // progress thread. Called once, before any post().
  void start(const std::map<int, std::vector<uint8_t>>& peerAddresses);
  // Hands a transfer with `tag` (transport/ucx/ucx_tag.h) of a buffer in
  // `memory` (a HETCCL_UCX_MEMORY_* bit) to the progress thread; after
  // stop(), or once `peer` was lost, it fails at once. A receive takes the
  // message whose tag matches in kUcxMatchMask and fails if its parts
  // count differs.
  void post(int peer, Direction direction, uint64_t tag, void* data,
            size_t bytes, unsigned memory,
            std::shared_ptr<PostedRequest> request);
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
    std::shared_ptr<PostedRequest> request;
  };
  // A transfer in UCX's hands; its address is the completion's user data.
  struct Operation {
    UcxEngine* engine;
    Posted posted;
    hetcclUcxOperation* handle = nullptr;
    bool posting = false;    // inside tagSend/tagRecv
    bool completed = false;  // its request completed or failed
  };
  struct Peer {
    UcxEngine* engine;
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
  void complete(Operation* operation, int status, size_t bytes, uint64_t tag);
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
  hetcclUcxWorker* worker_ = nullptr;
  std::map<int, std::unique_ptr<Peer>> peers_;
  std::map<Operation*, std::unique_ptr<Operation>> pending_;
  bool anyPeerLost_ = false;  // set by onPeerFailure (progress thread)
  OwnedFd epoll_;
  OwnedFd wakeFd_;
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stopRequested_{false};

  std::mutex inboxMutex_;  // guards inbox_ and stopReason_
  std::vector<Posted> inbox_;
  std::optional<Error> stopReason_;  // set once the thread has ended

  std::mutex stopMutex_;  // serialises stop()
  std::thread thread_;
};

}  // namespace hetccl
