#include "transport/ucx/ucx_engine.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>

#include "transport/ucx/ucx_tag.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// How long the thread keeps polling after the last event before it sleeps:
// a small message's reply usually comes within this, and a wake-up through
// the kernel costs several microseconds more.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(50);
// How long it sleeps before it looks at the abort signal again.
constexpr int kAbortCheckMs = 10;
// At shutdown: how long sent data may take to leave for the peers, and how
// long cancelled transfers may take to come back from UCX.
constexpr double kFlushSeconds = 5.0;
constexpr auto kCancelGrace = std::chrono::seconds(2);

constexpr uint64_t kWakeToken = 0;
constexpr uint64_t kWorkerToken = 1;

void watch(int epoll, int fd, uint64_t token) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = token;
  if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) < 0)
    failErrno("ucx transport: cannot watch a wake-up descriptor");
}

}  // namespace

UcxEngine::UcxEngine(const UcxLibrary& ucx, int rank,
                     std::shared_ptr<AbortSignal> abort)
    : ucx_(ucx),
      table_(ucx.table()),
      rank_(rank),
      abort_(std::move(abort)),
      epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      wakeFd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!epoll_.valid()) failErrno("ucx transport: epoll_create1 failed");
  if (!wakeFd_.valid()) failErrno("ucx transport: eventfd failed");
  ucx_.check(table_.workerCreate(ucx_.context(), &worker_),
             "creating a UCX worker");
  int workerFd = -1;
  int status = table_.workerEventFd(worker_, &workerFd);
  if (status != 0) {
    table_.workerDestroy(worker_);
    ucx_.check(status, "getting the UCX worker's event descriptor");
  }
  watch(epoll_.get(), wakeFd_.get(), kWakeToken);
  watch(epoll_.get(), workerFd, kWorkerToken);
}

UcxEngine::~UcxEngine() {
  stop();
  // Never started: the endpoints and the worker are still here.
  if (worker_ != nullptr)
    shutDown(Error(ncclSystemError, "the ucx transport was never started"));
}

std::vector<uint8_t> UcxEngine::address() const {
  std::vector<uint8_t> address(4096);
  size_t length = address.size();
  int status = table_.workerAddress(worker_, address.data(), &length);
  if (status != 0 && length > address.size()) {
    address.resize(length);
    status = table_.workerAddress(worker_, address.data(), &length);
  }
  ucx_.check(status, "getting the UCX worker's address");
  address.resize(length);
  return address;
}

void UcxEngine::start(const std::map<int, std::vector<uint8_t>>& addresses) {
  for (const auto& [rank, address] : addresses) {
    auto peer = std::make_unique<Peer>(Peer{this, rank});
    ucx_.check(table_.endpointCreate(worker_, address.data(), onPeerFailure,
                                     peer.get(), &peer->endpoint),
               "creating a UCX endpoint");
    peers_[rank] = std::move(peer);
  }
  thread_ = std::thread([this] { run(); });
}

void UcxEngine::post(int peer, Direction direction, uint64_t tag, void* data,
                     size_t bytes, unsigned memory,
                     std::shared_ptr<PostedRequest> request) {
  {
    std::lock_guard<std::mutex> lock(inboxMutex_);
    if (stopReason_) return request->failWith(*stopReason_);
    inbox_.push_back(
        {peer, direction, tag, data, bytes, memory, std::move(request)});
  }
  // Pairs with sleep(): it sets sleeping_ before it looks at the inbox.
  if (sleeping_.load()) wake();
}

void UcxEngine::stop() {
  std::lock_guard<std::mutex> lock(stopMutex_);
  stopRequested_.store(true);
  wake();
  if (thread_.joinable()) thread_.join();
}

void UcxEngine::wake() {
  uint64_t one = 1;
  // A full counter already wakes the thread.
  [[maybe_unused]] ssize_t n = ::write(wakeFd_.get(), &one, sizeof one);
}

void UcxEngine::run() {
  try {
    loop();
    shutDown(Error(ncclSystemError, "the ucx transport was shut down"));
  } catch (const Error& e) {
    shutDown(e);
  }
}

void UcxEngine::loop() {
  auto lastEvent = std::chrono::steady_clock::now();
  while (!stopRequested_.load()) {
    abort_->throwIfRaised();
    bool moved = adoptPosted();
    moved = table_.workerProgress(worker_) > 0 || moved;
    if (anyPeerLost_) handleLostPeers();
    const auto now = std::chrono::steady_clock::now();
    if (moved) {
      lastEvent = now;
    } else if (now - lastEvent > kSpinBeforeSleep &&
               table_.workerArm(worker_) != HETCCL_UCX_BUSY) {
      sleep();
      lastEvent = std::chrono::steady_clock::now();
    }
  }
}

void UcxEngine::sleep() {
  sleeping_.store(true);
  bool posted;
  {
    std::lock_guard<std::mutex> lock(inboxMutex_);
    posted = !inbox_.empty();
  }
  if (!posted && !stopRequested_.load()) {
    epoll_event events[2];
    ::epoll_wait(epoll_.get(), events, 2, kAbortCheckMs);
  }
  sleeping_.store(false);
  uint64_t count;
  [[maybe_unused]] ssize_t n = ::read(wakeFd_.get(), &count, sizeof count);
}

bool UcxEngine::adoptPosted() {
  std::vector<Posted> posted;
  {
    std::lock_guard<std::mutex> lock(inboxMutex_);
    posted.swap(inbox_);
  }
  for (Posted& p : posted) submit(std::move(p));
  return !posted.empty();
}

void UcxEngine::submit(Posted posted) {
  auto peer = peers_.find(posted.peer);
  if (peer == peers_.end())
    return posted.request->failWith(
        Error(ncclInternalError,
              format("ucx transport: rank %d has no link to rank %d", rank_,
                     posted.peer)));
  if (peer->second->lostStatus != 0)
    return posted.request->failWith(lostPeerError(*peer->second));
  auto owned = std::make_unique<Operation>(Operation{this, std::move(posted)});
  Operation* operation = owned.get();
  pending_[operation] = std::move(owned);
  const Posted& p = operation->posted;
  hetcclUcxOperation* handle = nullptr;
  // UCX may complete the operation, callback included, before the post
  // returns (also when it returns a handle): it is erased after the post.
  operation->posting = true;
  int status =
      p.direction == Direction::kSend
          ? table_.tagSend(peer->second->endpoint, p.data, p.bytes, p.tag,
                           p.memory, onCompletion, operation, &handle)
          : table_.tagRecv(worker_, p.data, p.bytes, p.tag, kUcxMatchMask,
                           p.memory, onCompletion, operation, &handle);
  operation->posting = false;
  if (status != 0 && !operation->completed)
    complete(operation, status, 0, p.tag);
  if (operation->completed)
    pending_.erase(operation);
  else
    operation->handle = handle;
}

void UcxEngine::onCompletion(void* user, int status, size_t bytes,
                             uint64_t tag) {
  auto* operation = static_cast<Operation*>(user);
  operation->engine->complete(operation, status, bytes, tag);
}

std::optional<Error> UcxEngine::sizeMismatch(const Posted& receive,
                                             size_t bytes, uint64_t tag) const {
  const unsigned sentParts = UcxTag::of(tag).parts;
  const unsigned expectedParts = UcxTag::of(receive.tag).parts;
  if (sentParts != expectedParts)
    return Error(
        ncclInvalidUsage,
        format("rank %d sent its transfer in %u part(s) where rank %d "
               "expects %u: the sizes of a send and its receive must agree",
               receive.peer, sentParts, rank_, expectedParts));
  if (bytes != receive.bytes)
    return Error(ncclInvalidUsage,
                 format("rank %d sent %zu bytes where rank %d expected %zu",
                        receive.peer, bytes, rank_, receive.bytes));
  return std::nullopt;
}

void UcxEngine::complete(Operation* operation, int status, size_t bytes,
                         uint64_t tag) {
  auto owned = pending_.find(operation);
  if (owned == pending_.end() || operation->completed) return;
  operation->completed = true;
  const Posted& p = operation->posted;
  const Peer& peer = *peers_.at(p.peer);  // submit() found it
  std::optional<Error> mismatch;
  if (status == 0 && p.direction == Direction::kRecv)
    mismatch = sizeMismatch(p, bytes, tag);
  if (mismatch) {
    p.request->failWith(*mismatch);
  } else if (status == 0) {
    p.request->complete();
  } else if (peer.lostStatus != 0) {
    p.request->failWith(lostPeerError(peer));
  } else {
    p.request->failWith(Error(
        ncclSystemError,
        format("UCX error %d (%s)", status, table_.statusString(status))));
  }
  if (!operation->posting) pending_.erase(owned);
}

void UcxEngine::onPeerFailure(void* user, int status) {
  auto* peer = static_cast<Peer*>(user);
  if (peer->lostStatus == 0) peer->lostStatus = status;
  peer->engine->anyPeerLost_ = true;
}

void UcxEngine::handleLostPeers() {
  anyPeerLost_ = false;
  for (auto& [rank, peer] : peers_) {
    if (peer->lostStatus == 0 || peer->lostHandled) continue;
    peer->lostHandled = true;
    std::vector<Operation*> affected;
    for (auto& [operation, owned] : pending_)
      if (operation->posted.peer == rank) affected.push_back(operation);
    const Error error = lostPeerError(*peer);
    if (affected.empty())
      LOG_INFO(kLogNet, "ucx transport (rank %d): %s", rank_, error.what());
    else
      LOG_WARN(kLogNet,
               "ucx transport (rank %d): %s; %zu transfer(s) with it fail",
               rank_, error.what(), affected.size());
    failAndCancel(affected, error);
  }
}

void UcxEngine::failAndCancel(const std::vector<Operation*>& operations,
                              const Error& error) {
  // The requests fail now. UCX hands a cancelled operation back through
  // its completion, at once or from a later progress call; either way
  // complete() erases it, which is why the caller lists the operations
  // rather than passing a range of pending_.
  for (Operation* operation : operations) {
    operation->posted.request->failWith(error);
    if (operation->handle != nullptr) table_.cancel(worker_, operation->handle);
  }
}

Error UcxEngine::lostPeerError(const Peer& peer) const {
  return Error(ncclRemoteError,
               format("connection to rank %d lost (UCX: %s)", peer.rank,
                      table_.statusString(peer.lostStatus)));
}

void UcxEngine::shutDown(const Error& reason) {
  {
    std::lock_guard<std::mutex> lock(inboxMutex_);
    stopReason_ = reason;
    for (Posted& p : inbox_) p.request->failWith(reason);
    inbox_.clear();
  }
  // Cancel what is pending and give UCX a moment to hand it back; the
  // operations stay allocated until the worker is gone, in case UCX still
  // completes one while closing.
  const bool clean = pending_.empty() && !abort_->raised();
  std::vector<Operation*> all;
  for (auto& [operation, owned] : pending_) all.push_back(operation);
  failAndCancel(all, reason);
  const auto deadline = std::chrono::steady_clock::now() + kCancelGrace;
  while (!pending_.empty() && std::chrono::steady_clock::now() < deadline)
    table_.workerProgress(worker_);
  if (clean) {
    int status = table_.workerFlush(worker_, kFlushSeconds);
    if (status != 0)
      LOG_INFO(kLogNet, "ucx transport (rank %d): flush at shutdown: %s", rank_,
               table_.statusString(status));
  }
  // Completions may still come while the endpoints close and the worker
  // goes: the operations and peers they reach stay until then.
  for (auto& [rank, peer] : peers_) {
    table_.endpointClose(worker_, peer->endpoint);
    peer->endpoint = nullptr;
  }
  table_.workerDestroy(worker_);
  worker_ = nullptr;
  pending_.clear();
  peers_.clear();
}

}  // namespace hetccl
