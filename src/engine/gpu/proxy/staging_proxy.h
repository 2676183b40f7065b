// The GPU engine's proxy: the one thread that moves staged pieces between
// the rings and the links. It touches only the network and host memory:
// a send is posted once the stream has copied the piece into its slot, a
// receive once the stream has copied the slot's previous piece out, and
// each finished piece raises its ring's proxy counter, which the stream
// waits on. It never calls into the GPU runtime, so whatever holds the
// runtime (another thread loading a module, say) cannot stop a transfer
// that a stream already waits for.
//
// Pieces are served in the order the engine's stream reaches them. A
// launch made outside a capture posts its pieces when it is enqueued;
// once the engine has captured a launch into a CUDA graph, whose replays
// the stream may reach before such pieces, they carry a gate: the
// launch's sequence number, which the engine's stream writes into
// `gateWord` when it reaches the launch. A captured launch leaves its
// pieces in a script (staged_launch_script.h) whose control word the proxy
// watches: when a replay starts, the script's pieces go ahead of every
// gated one. After a failure the proxy moves nothing more and the streams
// stay blocked; once the engine releases them (abort, destroy, revoke),
// the proxy keeps the rings' waits released for as long as it holds
// replayable scripts (a replay puts the counters back to 0), so that
// replays of the released communicator run through.
//
// It marks the oldest wait it sees for the stall reports: a piece on the
// network, or one that waits for the stream. Where the engine's domain has
// several GPUs, a piece waiting for the stream while the stream is inside a
// domain step not after the piece's work (DomainStepLog) waits for the
// domain instead: that step is marked, with a rank of the domain. Where
// the domain's back-end marks its own waits (host collectives under
// emulated GPUs), the proxy marks nothing while the stream is inside a
// domain step, so the back-end's mark of the peer it waits for stands.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/gpu/proxy/domain_step_log.h"
#include "engine/gpu/proxy/proxy_occupancy.h"
#include "engine/gpu/proxy/proxy_trace.h"
#include "engine/gpu/proxy/staging_ring.h"
#include "op/waiting_call.h"
#include "runtime/device/device_resources.h"
#include "transport/link.h"
#include "util/error.h"

namespace hetccl {

class StagedLaunchScript;

class StagingProxy {
 public:
  // `onFailure` runs on the proxy's thread when a link fails or a receive
  // outlasts `timeoutSeconds` (> 0); it reports the error, and the
  // streams stay blocked until release().
  // `gateWord`: host memory the engine's stream raises as it reaches
  // launches. `controlWords`: pinned memory, a word per script alive at
  // once. `waiting` (may be null): where the proxy marks the oldest
  // transfer that the links have not completed, for the call probe and
  // the stall reports. `domainSteps` (may be null: a domain of one GPU)
  // says which domain steps the engine's stream got past;
  // `domainMarksWaits`: the domain's back-end marks its own waits on
  // `waiting`. `trace` (may be null): where each piece moved is recorded
  // (HETCCL_PROXY_TRACE).
  StagingProxy(std::shared_ptr<AbortSignal> abort, double timeoutSeconds,
               const uint64_t* gateWord, PinnedHostMemory controlWords,
               std::function<void(const Error&)> onFailure,
               WaitingCall* waiting, const DomainStepLog* domainSteps = nullptr,
               bool domainMarksWaits = false,
               std::unique_ptr<ProxyTrace> trace = nullptr);
  // Drops what is still queued (the engine is going away) and stops.
  ~StagingProxy();
  StagingProxy(const StagingProxy&) = delete;
  StagingProxy& operator=(const StagingProxy&) = delete;

  enum class Direction { kSend, kReceive };
  class Queue;
  // Piece `piece` (of `bytes`) of the queue's ring, at `buffer`: its slot
  // of the ring, or on a direct queue GPU memory; not moved before the
  // gate word reaches `gate` (0: no gate).
  struct Job {
    Queue* queue;
    uint64_t piece;
    size_t bytes;
    uint64_t gate = 0;
    char* buffer = nullptr;
    CallSignature call{};  // of the user call the piece belongs to
    // The piece's place in its transfer, for the link (which places the
    // pieces of one transfer apart) and the stall reports.
    TransferPiece ofTransfer{};
    // The domain steps enqueued before its stream work
    // (DomainStepLog::enqueued; 0: none).
    uint64_t domainStepsBefore = 0;
    // When the proxy took it in (set by the proxy).
    std::chrono::steady_clock::time_point adopted{};
  };
  // The queue of one ring of `link`; it lives as long as the proxy.
  // `gpuMemory`: the kind of GPU memory its pieces are in, for a link
  // that moves it itself; none (0): they are in the ring's slots.
  Queue& addQueue(Link& link, const StagingRing& ring, Direction direction,
                  MemoryKind gpuMemory = MemoryKind{});
  // After the queue's earlier jobs, in piece order.
  void post(const Job& job);

  // A control word for a new script; throws ncclInvalidUsage when every
  // word is taken (that many captured launches).
  uint64_t* takeControlWord();
  // The script of a captured launch, watched from now on, for as long as
  // the proxy lives (a graph may replay it until then).
  void addScript(std::unique_ptr<StagedLaunchScript> script);
  // From now on the rings' waits are kept released (the engine released
  // its streams): nothing more moves.
  void release();
  // Drops what is still queued and ends the thread; nothing moves after.
  void stop();
  // Where the thread's time went (ProxyOccupancy::summary); once stopped.
  std::string occupancy() const { return occupancy_.summary(); }

 private:
  void run();
  // Moves the posted jobs and scripts in; `active` gains the queues that
  // had nothing to do.
  void adopt(std::vector<Queue*>& active);
  // Queues the pieces of the scripts whose stream reached them; true if
  // any did.
  bool serveScripts(std::vector<Queue*>& active, bool failed, bool released);
  // Under the mutex, on the proxy's thread: nothing more moves.
  void dropQueued();
  void startScript(const StagedLaunchScript& script,
                   std::vector<Queue*>& active);
  bool gateOpen(const Job& job) const;
  // The oldest wait a pass found: a piece posted on a link and not done
  // (since it was posted), or, on a queue with none of those, the piece
  // at the front that waits for the stream (since the proxy took it in).
  // Posted pieces compare by when they were posted, waiting ones by when
  // the proxy took them in; a waiting piece is older than a posted one
  // only if the proxy took it in earlier and it belongs to another call
  // (within one call the stream's copies wait for its network legs). A
  // piece behind the domain step the stream is inside waits for that step
  // (`domainStep`).
  struct OldestWait {
    uint64_t collective = 0;
    int peer = -1;
    std::optional<std::chrono::steady_clock::time_point> since;
    std::chrono::steady_clock::time_point adopted{};
    bool posted = false;
    uint64_t domainStep = 0;  // the step's number (0: not in the domain)
    WaitLeg leg;
    // Set before the pass: the domain step the stream is inside (0: none).
    uint64_t streamInStep = 0;
  };
  bool progress(Queue& queue);
  // What the queues of each direction wait for, into occupancy_.
  void account(const std::vector<Queue*>& active);
  // Offers the queue's front wait (after progress()) to `oldest`.
  void offerWait(const Queue& queue, OldestWait& oldest) const;
  void markWait(const OldestWait& oldest);
  void failAll(const Error& error);
  void pause(int& idlePolls) const;

  std::shared_ptr<AbortSignal> abort_;
  const double timeoutSeconds_;
  const uint64_t* gateWord_;
  PinnedHostMemory controlWords_;
  std::function<void(const Error&)> onFailure_;
  WaitingCall* const waiting_;
  const DomainStepLog* const domainSteps_;
  const bool domainMarksWaits_;
  uint64_t marked_ = 0;  // the proxy thread's: its wait's number (0: none)
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queue> queues_;  // stable addresses
  std::vector<Job> inbox_;
  std::vector<std::unique_ptr<StagedLaunchScript>> newScripts_;
  size_t usedControlWords_ = 0;  // a captured launch keeps its word
  bool stopping_ = false;
  bool failed_ = false;
  bool released_ = false;
  // The proxy thread's own.
  std::vector<std::unique_ptr<StagedLaunchScript>> scripts_;
  ProxyOccupancy occupancy_;
  const std::unique_ptr<ProxyTrace> trace_;  // written once the thread stops
  std::thread thread_;
};

}  // namespace hetccl
