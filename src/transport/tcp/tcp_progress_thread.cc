#include "transport/tcp/tcp_progress_thread.h"

#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// The epoll token of the wake-up eventfd; socket tokens are
// (channel << 8) | socket.
constexpr uint64_t kWakeToken = ~uint64_t{0};
// How long the thread sleeps without events before it looks at the abort
// signal again.
constexpr int kAbortCheckMs = 10;
constexpr int kMaxEvents = 64;

uint64_t socketToken(size_t channel, size_t socket) {
  return (static_cast<uint64_t>(channel) << 8) | socket;
}

}  // namespace

TcpProgressThread::TcpProgressThread(
    int rank, std::vector<std::unique_ptr<StripedChannel>> channels,
    std::shared_ptr<AbortSignal> abort, int pollMicroseconds,
    int busyPollMicroseconds)
    : rank_(rank),
      abort_(std::move(abort)),
      pollWindow_(std::chrono::microseconds(pollMicroseconds)),
      busyPollWindow_(std::chrono::microseconds(busyPollMicroseconds)),
      channels_(std::move(channels)),
      registered_(channels_.size()),
      dirty_(channels_.size(), true),
      epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      wakeFd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!epoll_.valid()) failErrno("tcp transport: epoll_create1 failed");
  if (!wakeFd_.valid()) failErrno("tcp transport: eventfd failed");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWakeToken;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wakeFd_.get(), &event) < 0)
    failErrno("tcp transport: cannot watch the wake-up eventfd");
  for (size_t c = 0; c < channels_.size(); ++c) {
    registered_[c].assign(channels_[c]->socketCount(), 0);
    for (size_t s = 0; s < channels_[c]->socketCount(); ++s) {
      // Interest 0 still reports errors and hang-ups.
      event.events = 0;
      event.data.u64 = socketToken(c, s);
      if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, channels_[c]->fd(s), &event) <
          0)
        failErrno("tcp transport: cannot watch a socket to rank %d",
                  channels_[c]->peer());
    }
  }
  thread_ = std::thread([this] { run(); });
}

TcpProgressThread::~TcpProgressThread() { stop(); }

void TcpProgressThread::post(size_t channel, Direction direction,
                             std::shared_ptr<PostedRequest> request, void* data,
                             size_t bytes, const LinkTransfer& whole,
                             const CallSignature& call,
                             const std::optional<ReceiveCombining>& combining) {
  if (inbox_.push({channel, direction, std::move(request), data, bytes, whole,
                   call, combining}))
    wake();
}

void TcpProgressThread::stop() {
  std::lock_guard<std::mutex> lock(stopMutex_);
  stopRequested_.store(true, std::memory_order_release);
  wake();
  if (thread_.joinable()) thread_.join();
}

// A polling thread looks at the inbox on its next turn. (Seen polling here
// after the post entered the inbox, the thread checks the inbox again after
// it stops polling: waitMilliseconds.)
void TcpProgressThread::wake() {
  if (polling_.load(std::memory_order_seq_cst)) return;
  if (wakePending_.exchange(true, std::memory_order_acq_rel)) return;
  uint64_t one = 1;
  // Cannot fail short of a full counter, which a pending wake-up rules out.
  ssize_t written = ::write(wakeFd_.get(), &one, sizeof(one));
  (void)written;
}

void TcpProgressThread::run() {
  pthread_setname_np(pthread_self(), "hetccl-tcp");
  Error reason(ncclSystemError,
               format("the tcp transport of rank %d was shut down", rank_));
  try {
    loop();
    if (abort_->raised())
      reason = Error(
          abort_->code() == ncclSuccess ? ncclSystemError : abort_->code(),
          format("tcp transport of rank %d aborted: %s", rank_,
                 abort_->reason().c_str()));
  } catch (...) {
    reason = currentExceptionAsError();
    LOG_WARN(kLogNet, "tcp transport (rank %d): progress thread failed: %s",
             rank_, reason.what());
  }
  shutDownAll(reason);
}

void TcpProgressThread::loop() {
  epoll_event events[kMaxEvents];
  Clock::time_point lastActivity = Clock::now();
  while (!stopRequested_.load(std::memory_order_acquire) && !abort_->raised()) {
    if (adoptPosted()) lastActivity = Clock::now();
    updateInterest();
    const int timeout = waitMilliseconds(lastActivity);
    int count = epoll_wait(epoll_.get(), events, kMaxEvents, timeout);
    if (count < 0) {
      if (errno == EINTR) continue;
      failErrno("tcp transport: epoll_wait failed");
    }
    for (int i = 0; i < count; ++i)
      dispatch(events[i].data.u64, events[i].events);
    recheckUnclaimed();
    if (count > 0)
      lastActivity = Clock::now();
    else if (timeout == 0)
      sched_yield();  // ranks may outnumber cores: let the peer run
  }
}

int TcpProgressThread::waitMilliseconds(Clock::time_point lastActivity) {
  const Clock::duration idle = Clock::now() - lastActivity;
  if (idle < pollWindow_ || (idle < busyPollWindow_ && transfersInFlight())) {
    polling_.store(true, std::memory_order_seq_cst);
    return 0;
  }
  polling_.store(false, std::memory_order_seq_cst);
  // A post that still saw the thread polling wrote no wake-up.
  return inbox_.empty() ? kAbortCheckMs : 0;
}

bool TcpProgressThread::transfersInFlight() const {
  for (const auto& channel : channels_)
    if (channel->inFlight()) return true;
  return false;
}

bool TcpProgressThread::adoptPosted() {
  std::vector<Posted> posted = inbox_.take();
  if (posted.empty()) return false;
  std::vector<bool> touched(channels_.size(), false);
  for (auto& p : posted) {
    StripedChannel& channel = *channels_[p.channel];
    if (p.direction == Direction::kSend) {
      channel.postSend(std::move(p.request), p.data, p.bytes, p.whole, p.call);
    } else {
      channel.postRecv(std::move(p.request), p.data, p.bytes, p.whole, p.call,
                       p.combining);
    }
    touched[p.channel] = true;
  }
  // Most sockets can take (or already hold) the new transfers' first
  // bytes: trying at once saves an epoll round trip per transfer.
  for (size_t c = 0; c < channels_.size(); ++c) {
    if (!touched[c]) continue;
    dirty_[c] = true;
    for (size_t s = 0; s < channels_[c]->socketCount(); ++s)
      if (!channels_[c]->broken())
        progress(c, s, channels_[c]->wantedEvents(s));
  }
  return true;
}

void TcpProgressThread::dispatch(uint64_t token, uint32_t events) {
  if (token == kWakeToken) {
    // The eventfd is drained first, then the flag cleared, then (at the top
    // of the next loop turn) the inbox read: a post that finds the flag set
    // is adopted then, and a post after the clear writes the eventfd anew.
    // Clearing before draining could swallow that write and leave the flag
    // set with nothing to wake the loop: every later post would then wait
    // for the epoll timeout.
    uint64_t value;
    ssize_t got = ::read(wakeFd_.get(), &value, sizeof(value));
    (void)got;
    wakePending_.store(false, std::memory_order_release);
    return;
  }
  size_t c = static_cast<size_t>(token >> 8);
  size_t s = static_cast<size_t>(token & 0xff);
  if (channels_[c]->broken()) return;
  dirty_[c] = true;
  progress(c, s, events);
}

void TcpProgressThread::progress(size_t c, size_t s, uint32_t events) {
  StripedChannel& channel = *channels_[c];
  bool failed = (events & (EPOLLERR | EPOLLHUP)) != 0;
  try {
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) channel.sendOn(s);
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) channel.receiveOn(s);
    // Reached when nothing was posted on the socket: the error would
    // otherwise be reported again and again.
    if (failed) channel.breakWith(channel.socketFailure(s));
  } catch (const Error& e) {
    channel.breakWith(e);
  }
}

// At most kAbortCheckMs after this rank made the call: the loop wakes
// that often.
void TcpProgressThread::recheckUnclaimed() {
  for (auto& channel : channels_) {
    if (!channel->awaitingCall() || channel->broken()) continue;
    try {
      channel->recheckUnclaimed();
    } catch (const Error& e) {
      channel->breakWith(e);
    }
  }
}

void TcpProgressThread::updateInterest() {
  for (size_t c = 0; c < channels_.size(); ++c) {
    if (!dirty_[c]) continue;
    dirty_[c] = false;
    StripedChannel& channel = *channels_[c];
    if (channel.broken()) continue;  // its sockets are closed
    for (size_t s = 0; s < channel.socketCount(); ++s)
      setInterest(c, s, channel.wantedEvents(s));
  }
}

void TcpProgressThread::setInterest(size_t channel, size_t socket,
                                    uint32_t events) {
  if (registered_[channel][socket] == events) return;
  epoll_event event{};
  event.events = events;
  event.data.u64 = socketToken(channel, socket);
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, channels_[channel]->fd(socket),
                &event) < 0)
    failErrno("tcp transport: cannot update the events of a socket to rank %d",
              channels_[channel]->peer());
  registered_[channel][socket] = events;
}

void TcpProgressThread::shutDownAll(const Error& reason) {
  inbox_.close(reason);
  for (auto& channel : channels_) channel->shutDown(reason);
}

}  // namespace hetccl
