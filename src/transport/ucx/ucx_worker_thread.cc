#include "transport/ucx/ucx_worker_thread.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "transport/link.h"
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
// How long a notice of calls that disagree may take to reach the peer
// (a loaded machine's worker threads may wait for a core).
constexpr auto kNoticeGrace = std::chrono::milliseconds(1000);
// How long the thread then waits for those peers to read it and close.
constexpr auto kNoticeLinger = std::chrono::seconds(3);

void watch(int epoll, int fd, uint64_t token) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = token;
  if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) < 0)
    failErrno("ucx transport: cannot watch a wake-up descriptor");
}

}  // namespace

UcxWorkerThread::UcxWorkerThread(const UcxLibrary& ucx, int rank,
                                 std::shared_ptr<AbortSignal> abort,
                                 std::shared_ptr<const CallLog> calls)
    : ucx_(ucx),
      table_(ucx.table()),
      rank_(rank),
      abort_(std::move(abort)),
      calls_(std::move(calls)),
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

UcxWorkerThread::~UcxWorkerThread() {
  stop();
  // Never started: the endpoints and the worker are still here.
  if (worker_ != nullptr)
    shutDown(Error(ncclSystemError, "the ucx transport was never started"));
}

std::vector<uint8_t> UcxWorkerThread::address() const {
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

void UcxWorkerThread::start(
    const std::map<int, std::vector<uint8_t>>& addresses, uint8_t linkSet) {
  linkSet_ = linkSet;
  for (const auto& [rank, address] : addresses) {
    latestCalls_.emplace(rank, 0);
    auto peer = std::make_unique<Peer>(Peer{this, rank});
    ucx_.check(table_.endpointCreate(worker_, address.data(), onPeerFailure,
                                     peer.get(), &peer->endpoint),
               "creating a UCX endpoint");
    peers_[rank] = std::move(peer);
  }
  thread_ = std::thread([this] { run(); });
}

uint64_t UcxWorkerThread::latestCallFrom(int peer) const {
  auto latest = latestCalls_.find(peer);
  return latest == latestCalls_.end()
             ? 0
             : latest->second.load(std::memory_order_relaxed);
}

void UcxWorkerThread::post(int peer, Direction direction, uint64_t tag,
                           void* data, size_t bytes, unsigned memory,
                           std::shared_ptr<PostedRequest> request) {
  // Pairs with sleep(): it sets sleeping_ before it looks at the inbox.
  if (inbox_.push(
          {peer, direction, tag, data, bytes, memory, std::move(request)}) &&
      sleeping_.load())
    wake();
}

void UcxWorkerThread::postCall(int peer, Direction direction, uint64_t tag,
                               const CallSignature& call,
                               std::shared_ptr<PostedRequest> request) {
  if (inbox_.push({peer, direction, tag, nullptr, 0, HETCCL_UCX_MEMORY_HOST,
                   std::move(request), call}) &&
      sleeping_.load())
    wake();
}

void UcxWorkerThread::stop() {
  std::lock_guard<std::mutex> lock(stopMutex_);
  stopRequested_.store(true);
  wake();
  if (thread_.joinable()) thread_.join();
}

void UcxWorkerThread::wake() {
  uint64_t one = 1;
  // A full counter already wakes the thread.
  [[maybe_unused]] ssize_t n = ::write(wakeFd_.get(), &one, sizeof one);
}

void UcxWorkerThread::run() {
  try {
    loop();
    shutDown(Error(ncclSystemError, "the ucx transport was shut down"));
  } catch (const Error& e) {
    shutDown(e);
  }
}

void UcxWorkerThread::loop() {
  auto lastEvent = std::chrono::steady_clock::now();
  while (!stopRequested_.load()) {
    if (!lingering()) abort_->throwIfRaised();
    if (!controlReceivePosted_) postControlReceive();
    bool moved = adoptPosted();
    moved = table_.workerProgress(worker_) > 0 || moved;
    if (anyPeerLost_) handleLostPeers();
    if (!awaitingCalls_.empty()) recheckUnclaimed();
    if (disagreement_) sendNotices();
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

void UcxWorkerThread::sleep() {
  sleeping_.store(true);
  if (inbox_.empty() && !stopRequested_.load()) {
    epoll_event events[2];
    ::epoll_wait(epoll_.get(), events, 2, kAbortCheckMs);
  }
  sleeping_.store(false);
  uint64_t count;
  [[maybe_unused]] ssize_t n = ::read(wakeFd_.get(), &count, sizeof count);
}

bool UcxWorkerThread::adoptPosted() {
  std::vector<Posted> posted = inbox_.take();
  for (Posted& p : posted) {
    if (!abort_->raised())
      submit(std::move(p));
    else if (p.request)  // lingering
      p.request->failWith(Error(abort_->code(), abort_->reason()));
  }
  return !posted.empty();
}

void UcxWorkerThread::submit(Posted posted) {
  auto peer = peers_.find(posted.peer);
  std::optional<Error> refusal;
  if (peer == peers_.end())
    refusal = Error(ncclInternalError,
                    format("ucx transport: rank %d has no link to rank %d",
                           rank_, posted.peer));
  else if (peer->second->lostStatus != 0)
    refusal = lostPeerError(*peer->second);
  if (refusal) {
    if (posted.request) posted.request->failWith(*refusal);
    return;
  }
  if (posted.call) return submitCall(std::move(posted));
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

// A send's call leaves as a control message; a receive's check is settled
// by the peer's, which may be in already.
void UcxWorkerThread::submitCall(Posted posted) {
  if (posted.direction == Direction::kSend) {
    uint8_t call[kEncodedCallBytes];
    encodeCall(*posted.call, call);
    postControl(posted.peer, posted.tag, call, sizeof call);
    if (posted.request) posted.request->complete();
    return;
  }
  const TransferKey key{posted.peer, UcxTag::of(posted.tag).transfer};
  auto in = unclaimed_.find(key);
  if (in == unclaimed_.end()) {
    callChecks_.emplace(key, std::move(posted));
    return;
  }
  const CallSignature peerCall = in->second;
  unclaimed_.erase(in);
  settle(posted, peerCall);
}

UcxWorkerThread::Operation* UcxWorkerThread::postControl(int peer, uint64_t tag,
                                                         const uint8_t* message,
                                                         size_t bytes) {
  auto found = peers_.find(peer);
  if (found == peers_.end() || found->second->lostStatus != 0) return nullptr;
  auto owned = std::make_unique<Operation>(
      Operation{this, Posted{peer, Direction::kSend, tag, nullptr, bytes,
                             HETCCL_UCX_MEMORY_HOST, nullptr}});
  Operation* operation = owned.get();
  operation->role = Role::kControlSend;
  std::copy(message, message + bytes, operation->message);
  pending_[operation] = std::move(owned);
  hetcclUcxOperation* handle = nullptr;
  operation->posting = true;
  int status =
      table_.tagSend(found->second->endpoint, operation->message, bytes, tag,
                     HETCCL_UCX_MEMORY_HOST, onCompletion, operation, &handle);
  operation->posting = false;
  if (status != 0 || operation->completed) {
    pending_.erase(operation);
    return nullptr;
  }
  operation->handle = handle;
  return operation;
}

// One receive for every control message of the link set, from any peer;
// posted again by the loop after each.
void UcxWorkerThread::postControlReceive() {
  auto owned = std::make_unique<Operation>(
      Operation{this, Posted{-1, Direction::kRecv, 0, nullptr, 0,
                             HETCCL_UCX_MEMORY_HOST, nullptr}});
  Operation* operation = owned.get();
  operation->role = Role::kControlReceive;
  pending_[operation] = std::move(owned);
  hetcclUcxOperation* handle = nullptr;
  const uint64_t tag = (uint64_t{linkSet_} << 56) | (kUcxNoticePart << 8);
  operation->posting = true;
  controlReceivePosted_ = true;
  int status =
      table_.tagRecv(worker_, operation->message, sizeof operation->message,
                     tag, kUcxControlMask, HETCCL_UCX_MEMORY_HOST, onCompletion,
                     operation, &handle);
  operation->posting = false;
  if (status != 0 && !operation->completed) {
    pending_.erase(operation);
    ucx_.check(status, "posting the receive of control messages");
  }
  if (operation->completed)
    pending_.erase(operation);
  else
    operation->handle = handle;
}

void UcxWorkerThread::onCompletion(void* user, int status, size_t bytes,
                                   uint64_t tag) {
  auto* operation = static_cast<Operation*>(user);
  operation->engine->complete(operation, status, bytes, tag);
}

std::optional<Error> UcxWorkerThread::sizeMismatch(const Posted& receive,
                                                   size_t bytes,
                                                   uint64_t tag) const {
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

void UcxWorkerThread::complete(Operation* operation, int status, size_t bytes,
                               uint64_t tag) {
  auto owned = pending_.find(operation);
  if (owned == pending_.end() || operation->completed) return;
  operation->completed = true;
  if (operation->role != Role::kTransfer) {
    if (operation->role == Role::kControlReceive) {
      controlReceivePosted_ = false;
      if (status == 0) onControlMessage(tag, operation->message);
    }
    if (!operation->posting) pending_.erase(owned);
    return;
  }
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

void UcxWorkerThread::onControlMessage(uint64_t tag, const uint8_t* message) {
  const UcxTag from = UcxTag::of(tag);
  if (from.part == kUcxNoticePart) {
    // The peer found that this rank's call disagreed with its own. It
    // keeps its endpoints open until it hears back (lingering()): a notice
    // back, unless this rank sent it one already.
    noticedBy_.push_back(from.sender);
    const CallSignature own = decodeCall(message);
    const CallSignature peers = decodeCall(message + kEncodedCallBytes);
    Error error = callDisagreement(rank_, own, from.sender, peers);
    if (std::find(notified_.begin(), notified_.end(), from.sender) !=
        notified_.end()) {
      abort_->raise(error.code(), error.what());
      return;
    }
    queueNotice(from.sender, peers, own);
    if (!disagreement_) disagreement_ = error;
    return;
  }
  onPeerCall({from.sender, from.transfer}, decodeCall(message));
}

void UcxWorkerThread::onPeerCall(const TransferKey& key,
                                 const CallSignature& call) {
  auto latest = latestCalls_.find(key.first);
  if (latest != latestCalls_.end()) raiseLatestCall(latest->second, call);
  auto waiting = callChecks_.find(key);
  if (waiting == callChecks_.end()) {
    unclaimed_[key] = call;
    return checkUnclaimed(key.first, call);
  }
  const Posted check = std::move(waiting->second);
  callChecks_.erase(waiting);
  settle(check, call);
}

void UcxWorkerThread::settle(const Posted& check,
                             const CallSignature& peerCall) {
  if (callsAgree(peerCall, *check.call))
    check.request->complete();
  else
    check.request->failWith(disagree(check.peer, peerCall, *check.call));
}

// A collective's call that no check claims yet may belong to a call whose
// plan here never receives from this peer. (A send always meets a
// receive.)
void UcxWorkerThread::checkUnclaimed(int peer, const CallSignature& call) {
  if (!calls_ || call.pointToPoint()) return;
  if (!calls_->made(call.sequence)) {
    awaitingCalls_.push_back({peer, call});
    return;
  }
  std::optional<CallSignature> own = calls_->find(call.sequence);
  if (own && !callsAgree(call, *own)) disagree(peer, call, *own);
}

// Those a check claimed since then need no look.
void UcxWorkerThread::recheckUnclaimed() {
  std::vector<std::pair<int, CallSignature>> awaiting;
  awaiting.swap(awaitingCalls_);
  for (const auto& [peer, call] : awaiting) {
    bool unclaimed = false;
    for (const auto& [key, kept] : unclaimed_)
      unclaimed =
          unclaimed || (key.first == peer && kept.sequence == call.sequence);
    if (unclaimed) checkUnclaimed(peer, call);
  }
}

Error UcxWorkerThread::disagree(int peer, const CallSignature& sent,
                                const CallSignature& posted) {
  Error error = callDisagreement(peer, sent, rank_, posted);
  queueNotice(peer, sent, posted);
  if (!disagreement_) disagreement_ = error;
  return error;
}

void UcxWorkerThread::queueNotice(int peer, const CallSignature& peerCall,
                                  const CallSignature& ownCall) {
  std::vector<uint8_t> notice(2 * kEncodedCallBytes);
  encodeCall(peerCall, notice.data());
  encodeCall(ownCall, notice.data() + kEncodedCallBytes);
  notices_.push_back({peer, std::move(notice)});
}

void UcxWorkerThread::sendNotices() {
  std::vector<Operation*> sending;
  for (const auto& [peer, notice] : notices_) {
    UcxTag tag;
    tag.linkSet = linkSet_;
    tag.sender = rank_;
    tag.part = kUcxNoticePart;
    auto found = peers_.find(peer);
    if (found == peers_.end() || found->second->lostStatus != 0) continue;
    notified_.push_back(peer);
    if (Operation* op =
            postControl(peer, tag.value(), notice.data(), notice.size()))
      sending.push_back(op);
  }
  notices_.clear();
  const auto deadline = std::chrono::steady_clock::now() + kNoticeGrace;
  auto anySending = [&] {
    for (Operation* op : sending)
      if (pending_.count(op)) return true;
    return false;
  };
  while (anySending() && std::chrono::steady_clock::now() < deadline)
    table_.workerProgress(worker_);
  // A send complete here may still wait in UCX's queues: a flush returns
  // once the peer has it. Even then the peer may not have read it, which
  // is why the thread lingers before it closes the endpoints (seen on a
  // loaded 2-core machine: a tcp reset dropped the notice unread).
  const double left =
      std::chrono::duration<double>(deadline - std::chrono::steady_clock::now())
          .count();
  if (!notified_.empty() && left > 0) {
    int status = table_.workerFlush(worker_, left);
    if (status != 0)
      LOG_INFO(kLogNet,
               "ucx transport (rank %d): flushing the notice of calls that "
               "disagree: %s",
               rank_, table_.statusString(status));
  }
  abort_->raise(disagreement_->code(), disagreement_->what());
  disagreement_.reset();
  lingerUntil_ = std::chrono::steady_clock::now() + kNoticeLinger;
  // The transfers end now, as at shutdown: while the thread lingers, UCX
  // must not touch buffers that their owners may free after the abort.
  std::vector<Operation*> transfers;
  for (auto& [operation, owned] : pending_)
    if (operation->role == Role::kTransfer) transfers.push_back(operation);
  failAndCancel(transfers, Error(abort_->code(), abort_->reason()));
}

bool UcxWorkerThread::lingering() const {
  if (std::chrono::steady_clock::now() >= lingerUntil_) return false;
  for (int peer : notified_) {
    const bool answered = std::find(noticedBy_.begin(), noticedBy_.end(),
                                    peer) != noticedBy_.end();
    if (!answered && peers_.at(peer)->lostStatus == 0) return true;
  }
  return false;
}

void UcxWorkerThread::failCallChecks(int peer, const Error& error) {
  for (auto it = callChecks_.begin(); it != callChecks_.end();) {
    if (peer >= 0 && it->first.first != peer) {
      ++it;
      continue;
    }
    it->second.request->failWith(error);
    it = callChecks_.erase(it);
  }
}

void UcxWorkerThread::onPeerFailure(void* user, int status) {
  auto* peer = static_cast<Peer*>(user);
  if (peer->lostStatus == 0) peer->lostStatus = status;
  peer->engine->anyPeerLost_ = true;
}

void UcxWorkerThread::handleLostPeers() {
  anyPeerLost_ = false;
  for (auto& [rank, peer] : peers_) {
    if (peer->lostStatus == 0 || peer->lostHandled) continue;
    peer->lostHandled = true;
    std::vector<Operation*> affected;
    for (auto& [operation, owned] : pending_)
      if (operation->posted.peer == rank) affected.push_back(operation);
    const Error error = lostPeerError(*peer);
    failCallChecks(rank, error);
    if (affected.empty())
      LOG_INFO(kLogNet, "ucx transport (rank %d): %s", rank_, error.what());
    else
      LOG_WARN(kLogNet,
               "ucx transport (rank %d): %s; %zu transfer(s) with it fail",
               rank_, error.what(), affected.size());
    failAndCancel(affected, error);
  }
}

void UcxWorkerThread::failAndCancel(const std::vector<Operation*>& operations,
                                    const Error& error) {
  // The requests fail now. UCX hands a cancelled operation back through
  // its completion, at once or from a later progress call; either way
  // complete() erases it, which is why the caller lists the operations
  // rather than passing a range of pending_.
  for (Operation* operation : operations) {
    if (operation->posted.request) operation->posted.request->failWith(error);
    if (operation->handle != nullptr) table_.cancel(worker_, operation->handle);
  }
}

Error UcxWorkerThread::lostPeerError(const Peer& peer) const {
  return Error(ncclRemoteError,
               format("connection to rank %d lost (UCX: %s)", peer.rank,
                      table_.statusString(peer.lostStatus)));
}

void UcxWorkerThread::shutDown(const Error& reason) {
  inbox_.close(reason);
  failCallChecks(-1, reason);
  // Cancel what is pending and give UCX a moment to hand it back; the
  // operations stay allocated until the worker is gone, in case UCX still
  // completes one while closing.
  bool clean = !abort_->raised();
  for (auto& [operation, owned] : pending_)
    clean = clean && operation->role == Role::kControlReceive;
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
