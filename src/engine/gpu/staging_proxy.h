// The GPU engine's proxy: the one thread that moves staged pieces between
// the rings and the links. It touches only the network and host memory:
// a send is posted once the stream has copied the piece into its slot, a
// receive once the stream has copied the slot's previous piece out, and
// each finished piece raises its ring's proxy counter, which the stream
// waits on. It never calls into the GPU runtime, so whatever holds the
// runtime (another thread loading a module, say) cannot stop a transfer
// that a stream already waits for.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/gpu/staging_ring.h"
#include "transport/link.h"
#include "util/error.h"

namespace hetccl {

class StagingProxy {
 public:
  // `onFailure` runs on the proxy's thread when a link fails or a receive
  // outlasts `timeoutSeconds` (> 0); it must release the streams' waits.
  StagingProxy(std::shared_ptr<AbortSignal> abort, double timeoutSeconds,
               std::function<void(const Error&)> onFailure);
  // Drops what is still queued (the engine is going away) and stops.
  ~StagingProxy();
  StagingProxy(const StagingProxy&) = delete;
  StagingProxy& operator=(const StagingProxy&) = delete;

  enum class Direction { kSend, kReceive };
  class Queue;
  // The queue of one ring of `link`; it lives as long as the proxy.
  Queue& addQueue(Link& link, const StagingRing& ring, Direction direction);
  // Piece `piece` (of `bytes`) of the queue's ring, in piece order.
  void post(Queue& queue, uint64_t piece, size_t bytes);

 private:
  struct Job {
    Queue* queue;
    uint64_t piece;
    size_t bytes;
  };

  void run();
  bool progress(Queue& queue);
  void failAll(const Error& error);

  std::shared_ptr<AbortSignal> abort_;
  const double timeoutSeconds_;
  std::function<void(const Error&)> onFailure_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queue> queues_;  // stable addresses
  std::vector<Job> inbox_;
  bool stopping_ = false;
  bool failed_ = false;
  std::thread thread_;
};

}  // namespace hetccl
