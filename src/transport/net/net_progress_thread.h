// The progress engine of a net link set: one thread that makes every call
// on the plugin's comms, so that a plugin need not be thread-safe per comm.
// It first connects to every peer (net_connect.h), then drives the
// channels: threads that post transfers queue them in an inbox and wake the
// thread. A plugin has no descriptor to sleep on, so the thread polls while
// a transfer waits (napping once it stalls), and otherwise sleeps a
// millisecond at a time between looks at the peers' next headers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "op/call_log.h"
#include "transport/net/net_channel.h"
#include "transport/net/net_connect.h"
#include "transport/progress_inbox.h"
#include "util/abort_signal.h"

namespace hetccl {

class NetProgressThread {
 public:
  enum class Direction { kSend, kRecv };

  // Inits the plugin for this communicator and listens on `device` (the
  // rail this thread serves); throws the plugin's error. `calls` (may be
  // null) are this rank's.
  NetProgressThread(const NetLibrary& library, uint64_t commId, int rank,
                    int device, std::shared_ptr<AbortSignal> abort,
                    std::shared_ptr<const CallLog> calls);
  // Stops the thread (see stop()).
  ~NetProgressThread();
  NetProgressThread(const NetProgressThread&) = delete;
  NetProgressThread& operator=(const NetProgressThread&) = delete;

  // What peers connect to, and the device it listens on.
  const NetListenHandle& handle() const { return handle_; }
  int device() const { return device_; }
  // Starts the thread, which connects to the peers of `plan` (its device
  // is this thread's). `partBytes`: the largest message.
  void start(const NetConnectPlan& plan, size_t partBytes);
  // Returns once the thread started has connected, or throws why it could
  // not.
  void awaitConnected();
  // Hands a transfer to the thread; after stop(), or once the link with
  // `peer` broke, it fails at once. `memory`: where the buffer is;
  // `transferBytes`: the link's transfer that it is a share of.
  void post(int peer, Direction direction,
            std::shared_ptr<PostedRequest> request, void* data, size_t bytes,
            size_t transferBytes, NetMemory memory, const CallSignature& call);
  // The latest collective a transfer from `peer` belonged to
  // (Link::latestCallFrom). Any thread, after start().
  uint64_t latestCallFrom(int peer) const;
  // Stops and joins the thread: what is pending fails, the comms close and
  // the plugin's context ends. Idempotent.
  void stop();

 private:
  struct Posted {
    int peer;
    Direction direction;
    std::shared_ptr<PostedRequest> request;
    void* data;
    size_t bytes;
    size_t transferBytes;
    NetMemory memory;
    CallSignature call;
  };

  void run(NetConnectPlan plan, size_t partBytes);
  void loop();
  // Whether anything was posted.
  bool adoptPosted();
  // `busy`: a transfer waits; `stalled`: nothing moved for a while.
  void sleep(bool busy, bool stalled);
  void shutDown(const Error& reason);

  const int rank_;
  const int device_;
  const std::shared_ptr<AbortSignal> abort_;
  const std::shared_ptr<const CallLog> calls_;
  NetContext context_;
  NetComm listen_;
  NetListenHandle handle_{};
  // Per peer, made by start() and kept to the end: read by any thread.
  std::map<int, std::atomic<uint64_t>> latestCalls_;
  std::map<int, std::unique_ptr<NetChannel>> channels_;
  std::promise<void> connected_;
  std::future<void> connection_;

  ProgressInbox<Posted> inbox_;
  std::mutex sleepMutex_;
  std::condition_variable woken_;
  std::atomic<bool> stopRequested_{false};
  std::mutex stopMutex_;  // serialises stop()
  std::thread thread_;
};

}  // namespace hetccl
