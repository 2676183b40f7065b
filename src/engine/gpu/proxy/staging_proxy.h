// The GPU engine's proxy: the one thread that moves staged pieces between
// the rings and the links. It touches only the network and host memory:
// a send is posted once the stream has copied the piece into its slot, a
// receive once the stream has copied the slot's previous piece out, and
// each finished piece raises its ring's proxy counter, which the stream
// waits on. It never calls into the GPU runtime, so whatever holds the
// runtime (another thread loading a module, say) cannot stop a transfer
// that a stream already waits for.
//
// Pieces are served in the order the engine's stream reaches them: every
// launch leaves its pieces in a script (staged_launch_script.h) whose
// control word the proxy watches, and the stream starts the script when
// it reaches the launch, whether the launch runs once or is captured in a
// CUDA graph and replayed. After a failure the proxy moves nothing more
// and the streams stay blocked; once the engine releases them (abort,
// destroy, revoke), the proxy keeps the rings' waits released for as long
// as it holds scripts (a replay puts the counters back to 0), so that the
// released communicator's launches and replays run through.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

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
  // `controlWords`: pinned memory, a word per script alive at once. `waiting`
  // (may be null): where the proxy marks the oldest transfer of a collective
  // that the links have not completed, for the call probe.
  StagingProxy(std::shared_ptr<AbortSignal> abort, double timeoutSeconds,
               PinnedHostMemory controlWords,
               std::function<void(const Error&)> onFailure,
               WaitingCall* waiting);
  // Drops what is still queued (the engine is going away) and stops.
  ~StagingProxy();
  StagingProxy(const StagingProxy&) = delete;
  StagingProxy& operator=(const StagingProxy&) = delete;

  enum class Direction { kSend, kReceive };
  class Queue;
  // Piece `piece` (of `bytes`) of the queue's ring. A direct queue's
  // pieces are in GPU memory at `gpuBuffer`, not in the ring's slots.
  struct Job {
    Queue* queue;
    uint64_t piece;
    size_t bytes;
    char* gpuBuffer = nullptr;
    CallSignature call{};  // of the user call the piece belongs to
  };
  // The queue of one ring of `link`; it lives as long as the proxy.
  // `gpuMemory`: the kind of GPU memory its pieces are in, for a link
  // that moves it itself; none (0): they are in the ring's slots.
  Queue& addQueue(Link& link, const StagingRing& ring, Direction direction,
                  MemoryKind gpuMemory = MemoryKind{});
  // A control word for a new script. For a launch that runs once, waits
  // until its stream has started enough earlier launches to free one; for
  // a captured one, throws ncclInvalidUsage when every word is taken (that
  // many captured launches). Throws the abort's error once it is raised.
  uint64_t* takeControlWord(bool replayable);
  // The script of an enqueued launch, watched from now on: for as long as
  // the proxy lives if it is replayable, else until it ran once.
  void addScript(std::unique_ptr<StagedLaunchScript> script);
  // From now on the rings' waits are kept released (the engine released
  // its streams): nothing more moves.
  void release();

 private:
  void run();
  // Moves the new scripts in.
  void adopt();
  // Queues the pieces of the scripts whose stream reached them; true if
  // any did.
  bool serveScripts(std::vector<Queue*>& active, bool failed, bool released);
  // Under the mutex, on the proxy's thread: nothing more moves.
  void dropQueued();
  void startScript(const StagedLaunchScript& script,
                   std::vector<Queue*>& active);
  // The oldest collective's transfer a pass found not done.
  struct OldestWait {
    uint64_t collective = 0;
    int peer = -1;
    std::optional<std::chrono::steady_clock::time_point> since;
  };
  bool progress(Queue& queue, OldestWait& oldest);
  void markWait(const OldestWait& oldest);
  void failAll(const Error& error);
  void pause(int& idlePolls) const;

  std::shared_ptr<AbortSignal> abort_;
  const double timeoutSeconds_;
  PinnedHostMemory controlWords_;
  std::function<void(const Error&)> onFailure_;
  WaitingCall* const waiting_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable wordFreed_;
  std::deque<Queue> queues_;  // stable addresses
  std::vector<std::unique_ptr<StagedLaunchScript>> newScripts_;
  std::vector<uint64_t*> freeControlWords_;
  bool stopping_ = false;
  bool failed_ = false;
  bool released_ = false;
  // The proxy thread's own.
  std::vector<std::unique_ptr<StagedLaunchScript>> scripts_;
  std::thread thread_;
};

}  // namespace hetccl
