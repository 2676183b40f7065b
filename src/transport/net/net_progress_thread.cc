#include "transport/net/net_progress_thread.h"

#include <chrono>

#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// How long the thread keeps polling after the last movement before it
// sleeps: the reply to a small message usually comes within it.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(50);
// How long it sleeps, with no transfer waiting, before it looks at the
// peers' next headers (and the abort signal) again.
constexpr auto kIdleSleep = std::chrono::milliseconds(1);
// A transfer that has waited this long without any movement is waiting for
// its peer: the thread then naps between polls instead of spinning on a
// core that the ranks share.
constexpr auto kStalledAfter = std::chrono::milliseconds(1);
constexpr auto kStalledNap = std::chrono::microseconds(50);

}  // namespace

NetProgressThread::NetProgressThread(const NetLibrary& library, uint64_t commId,
                                     int rank, int device,
                                     std::shared_ptr<AbortSignal> abort,
                                     std::shared_ptr<const CallLog> calls)
    : rank_(rank),
      device_(device),
      abort_(std::move(abort)),
      calls_(std::move(calls)),
      context_(library, commId) {
  void* comm = nullptr;
  library.check(
      library.table().listen(context_.get(), device, handle_.data(), &comm),
      "listen");
  listen_ = NetComm(context_, NetComm::Kind::kListen, comm);
}

NetProgressThread::~NetProgressThread() { stop(); }

void NetProgressThread::start(const NetConnectPlan& plan, size_t partBytes) {
  for (const auto& [peer, handle] : plan.peers) latestCalls_.emplace(peer, 0);
  connection_ = connected_.get_future();
  NetConnectPlan own = plan;
  own.device = device_;
  thread_ = std::thread([this, own, partBytes] { run(own, partBytes); });
}

void NetProgressThread::awaitConnected() { connection_.get(); }

void NetProgressThread::run(NetConnectPlan plan, size_t partBytes) {
  try {
    std::map<int, NetPeerComms> comms =
        connectNetPeers(context_, listen_, plan, *abort_, stopRequested_);
    listen_.close();
    for (auto& [peer, pair] : comms)
      channels_[peer] = std::make_unique<NetChannel>(
          context_, rank_, peer, std::move(pair), partBytes, abort_, calls_,
          latestCalls_.at(peer));
  } catch (...) {
    const Error error = currentExceptionAsError();
    shutDown(error);
    connected_.set_exception(std::make_exception_ptr(error));
    return;
  }
  connected_.set_value();
  try {
    loop();
    shutDown(Error(ncclSystemError, "the net transport was shut down"));
  } catch (...) {
    shutDown(currentExceptionAsError());
  }
}

void NetProgressThread::loop() {
  auto lastMove = std::chrono::steady_clock::now();
  while (!stopRequested_.load()) {
    abort_->throwIfRaised();
    bool moved = adoptPosted();
    bool busy = false;
    for (auto& [peer, channel] : channels_) {
      try {
        moved = channel->progress() || moved;
      } catch (...) {
        channel->breakWith(currentExceptionAsError());
      }
      busy = busy || channel->busy();
    }
    const auto now = std::chrono::steady_clock::now();
    if (moved) lastMove = now;
    if (!moved && now - lastMove > kSpinBeforeSleep)
      sleep(busy, now - lastMove > kStalledAfter);
  }
}

bool NetProgressThread::adoptPosted() {
  std::vector<Posted> posted = inbox_.take();
  for (Posted& p : posted) {
    auto channel = channels_.find(p.peer);
    if (channel == channels_.end()) {
      p.request->failWith(Error(ncclInternalError,
                                format("net transport: rank %d has no link to "
                                       "rank %d",
                                       rank_, p.peer)));
    } else if (p.direction == Direction::kSend) {
      channel->second->postSend(std::move(p.request), p.data, p.bytes,
                                p.transferBytes, std::move(p.memory), p.call);
    } else {
      channel->second->postRecv(std::move(p.request), p.data, p.bytes,
                                p.transferBytes, std::move(p.memory), p.call);
    }
  }
  return !posted.empty();
}

// A waiting transfer keeps the thread polling (the plugin moves data only
// when asked), yielding the core between rounds, or napping once nothing
// moved for a while; with none it sleeps until a post or the next look at
// the peers' headers.
void NetProgressThread::sleep(bool busy, bool stalled) {
  if (busy && stalled) return std::this_thread::sleep_for(kStalledNap);
  if (busy) return std::this_thread::yield();
  std::unique_lock<std::mutex> lock(sleepMutex_);
  woken_.wait_for(lock, kIdleSleep,
                  [this] { return stopRequested_.load() || !inbox_.empty(); });
}

void NetProgressThread::post(int peer, Direction direction,
                             std::shared_ptr<PostedRequest> request, void* data,
                             size_t bytes, size_t transferBytes,
                             NetMemory memory, const CallSignature& call) {
  if (inbox_.push({peer, direction, std::move(request), data, bytes,
                   transferBytes, std::move(memory), call})) {
    std::lock_guard<std::mutex> lock(sleepMutex_);
    woken_.notify_one();
  }
}

uint64_t NetProgressThread::latestCallFrom(int peer) const {
  auto latest = latestCalls_.find(peer);
  return latest == latestCalls_.end()
             ? 0
             : latest->second.load(std::memory_order_relaxed);
}

void NetProgressThread::stop() {
  std::lock_guard<std::mutex> lock(stopMutex_);
  {
    std::lock_guard<std::mutex> sleeping(sleepMutex_);
    stopRequested_.store(true);
    woken_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void NetProgressThread::shutDown(const Error& reason) {
  inbox_.close(reason);
  for (auto& [peer, channel] : channels_) channel->breakWith(reason);
  channels_.clear();
  listen_.close();
}

}  // namespace hetccl
