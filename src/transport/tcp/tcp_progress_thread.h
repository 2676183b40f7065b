// The progress engine of a tcp transport: one thread that drives every
// socket of every link with epoll. Threads that post transfers only queue
// them in an inbox and wake the thread through an eventfd; all socket I/O
// and all transfer bookkeeping happen on the progress thread. For a while
// after its last activity (HETCCL_TCP_POLL_US) the thread polls instead of
// sleeping, and posts need no wake-up (TcpLink's waits for small transfers
// poll as long before they sleep): a small message's round trip then pays
// for no wake-up of a sleeping thread. While it has transfers in flight it
// polls longer (HETCCL_TCP_BUSY_POLL_US): their next socket event is near.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "transport/progress_inbox.h"
#include "transport/tcp/striped_channel.h"
#include "util/abort_signal.h"
#include "util/owned_fd.h"

namespace hetccl {

class TcpProgressThread {
 public:
  enum class Direction { kSend, kRecv };

  // Starts the progress thread over `channels`. When `abort` is raised the
  // thread stops within a few milliseconds and every pending transfer
  // fails with its reason.
  TcpProgressThread(int rank,
                    std::vector<std::unique_ptr<StripedChannel>> channels,
                    std::shared_ptr<AbortSignal> abort, int pollMicroseconds,
                    int busyPollMicroseconds);
  // Stops the thread (see stop()).
  ~TcpProgressThread();
  TcpProgressThread(const TcpProgressThread&) = delete;
  TcpProgressThread& operator=(const TcpProgressThread&) = delete;

  // Hands a transfer to the progress thread; after stop() it fails at once.
  // A receive with `combining` combines what arrives into `data`.
  void post(size_t channel, Direction direction,
            std::shared_ptr<PostedRequest> request, void* data, size_t bytes,
            const LinkTransfer& whole, const CallSignature& call,
            const std::optional<ReceiveCombining>& combining = std::nullopt);
  // Stops and joins the progress thread, fails what is still pending and
  // closes every socket. Idempotent.
  void stop();

 private:
  struct Posted {
    size_t channel;
    Direction direction;
    std::shared_ptr<PostedRequest> request;
    void* data;
    size_t bytes;
    LinkTransfer whole;
    CallSignature call;
    std::optional<ReceiveCombining> combining;
  };

  using Clock = std::chrono::steady_clock;

  void run();
  void loop();
  void wake();
  // epoll_wait's timeout: 0 while polling.
  int waitMilliseconds(Clock::time_point lastActivity);
  // Whether a channel has a transfer that has not completed.
  bool transfersInFlight() const;
  // Whether anything was posted.
  bool adoptPosted();
  void dispatch(uint64_t token, uint32_t events);
  // Moves data on socket `s` of channel `c` for `events` (epoll's); a
  // failure breaks the channel.
  void progress(size_t c, size_t s, uint32_t events);
  // Compares the unclaimed stripes of calls this rank had not made yet
  // (StripedChannel::recheckUnclaimed); a failure breaks the channel.
  void recheckUnclaimed();
  void updateInterest();
  void setInterest(size_t channel, size_t socket, uint32_t events);
  // Ends every transfer, now and later, with `reason`.
  void shutDownAll(const Error& reason);

  const int rank_;
  const std::shared_ptr<AbortSignal> abort_;
  const Clock::duration pollWindow_;
  const Clock::duration busyPollWindow_;  // with transfers in flight
  std::vector<std::unique_ptr<StripedChannel>> channels_;
  // Per channel and socket: the events registered with epoll now.
  std::vector<std::vector<uint32_t>> registered_;
  std::vector<bool> dirty_;
  OwnedFd epoll_;
  OwnedFd wakeFd_;
  std::atomic<bool> wakePending_{false};
  std::atomic<bool> polling_{false};
  std::atomic<bool> stopRequested_{false};

  ProgressInbox<Posted> inbox_;
  std::mutex stopMutex_;  // serialises stop()
  std::thread thread_;
};

}  // namespace hetccl
