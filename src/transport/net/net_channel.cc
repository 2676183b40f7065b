#include "transport/net/net_channel.h"

#include <chrono>

#include "op/call_disagreement.h"
#include "transport/link.h"
#include "util/log.h"

namespace hetccl {
namespace {

constexpr size_t kMaxInFlight = HETCCL_NET_MODULE_MAX_REQUESTS;
// How long a notice of calls that disagree may take to leave.
constexpr auto kNoticeGrace = std::chrono::milliseconds(1000);

}  // namespace

NetChannel::NetChannel(const NetContext& context, int rank, int peer,
                       NetPeerComms comms, size_t partBytes,
                       std::shared_ptr<AbortSignal> abort,
                       std::shared_ptr<const CallLog> calls,
                       std::atomic<uint64_t>& latestCall)
    : context_(context),
      library_(context.library()),
      table_(library_.table()),
      rank_(rank),
      peer_(peer),
      partBytes_(partBytes),
      abort_(std::move(abort)),
      calls_(std::move(calls)),
      latestCall_(latestCall),
      comms_(std::move(comms)),
      sendSlotsRegistration_(context, comms_.send.get(), sendSlots_,
                             sizeof sendSlots_),
      headerInRegistration_(context, comms_.receive.get(), headerIn_,
                            sizeof headerIn_) {
  for (int slot = HETCCL_NET_MODULE_MAX_REQUESTS - 1; slot >= 0; --slot)
    freeSlots_.push_back(slot);
}

void NetChannel::postSend(std::shared_ptr<PostedRequest> request,
                          const void* data, size_t bytes, size_t transferBytes,
                          NetMemory memory, const CallSignature& call) {
  if (error_) return request->failWith(*error_);
  Transfer& t = sends_.emplace_back();
  t.request = std::move(request);
  // A send's bytes are only ever read.
  t.data = static_cast<char*>(const_cast<void*>(data));
  t.bytes = bytes;
  t.transferBytes = transferBytes;
  t.memory = std::move(memory);
  t.call = call;
  t.partBytes = partBytes_;
  t.parts = (bytes + partBytes_ - 1) / partBytes_;
}

void NetChannel::postRecv(std::shared_ptr<PostedRequest> request, void* data,
                          size_t bytes, size_t transferBytes, NetMemory memory,
                          const CallSignature& call) {
  if (error_) return request->failWith(*error_);
  Transfer& t = receives_.emplace_back();
  t.request = std::move(request);
  t.data = static_cast<char*>(data);
  t.bytes = bytes;
  t.transferBytes = transferBytes;
  t.memory = std::move(memory);
  t.call = call;
}

bool NetChannel::progress() {
  if (error_) return false;
  bool moved = false;
  try {
    moved = progressSends();
  } catch (const Error&) {
    // A peer that found the calls disagree sends a notice, then closes
    // the connection, which may fail a send here first: the notice, if it
    // came, is the cause to report (it raises the abort and throws).
    progressReceives();
    throw;
  }
  return progressReceives() || moved;
}

bool NetChannel::progressSends() {
  bool moved = false;
  // In posting order: a transfer's header and parts all go before the next
  // transfer's header, as the receiver expects them.
  for (Transfer& t : sends_) {
    if (!t.headerPosted) {
      if (!postHeader(t)) break;
      moved = true;
    }
    bool blocked = false;
    while (t.partsPosted < t.parts && !(blocked = !postPart(t, true)))
      moved = true;
    if (blocked) break;
  }
  moved = testInFlight(sendFlight_, true) || moved;
  while (!sends_.empty() && sends_.front().headerPosted &&
         sends_.front().partsDone == sends_.front().parts)
    completeFront(sends_);
  return moved;
}

bool NetChannel::progressReceives() {
  bool moved = false;
  if (headerRequest_ != nullptr) {
    int done = 0;
    check(table_.test(context_.get(), headerRequest_, &done, nullptr), "test");
    if (done) {
      headerRequest_ = nullptr;
      onHeader();
      moved = true;
    }
  }
  bool blocked = false;
  for (Transfer& t : receives_) {
    if (!t.matched) {
      if (!unclaimed_) break;
      match(t);
      moved = true;
    }
    while (t.partsPosted < t.parts && !(blocked = !postPart(t, false)))
      moved = true;
    if (blocked) break;
  }
  // The next header's receive goes after every part of the transfers
  // matched so far, in the order the peer sends them.
  if (!blocked && headerRequest_ == nullptr && !unclaimed_)
    moved = postHeaderReceive() || moved;
  moved = testInFlight(receiveFlight_, false) || moved;
  while (!receives_.empty() && receives_.front().matched &&
         receives_.front().partsDone == receives_.front().parts &&
         flushed(receives_.front()))
    completeFront(receives_);
  if (awaitingCall_ && unclaimed_) checkUnclaimed();
  return moved;
}

bool NetChannel::postHeader(Transfer& transfer) {
  if (sendFlight_.size() >= kMaxInFlight || freeSlots_.empty()) return false;
  const int slot = freeSlots_.back();
  NetTransferHeader{transfer.bytes, transfer.partBytes, transfer.call,
                    transfer.transferBytes}
      .encode(sendSlots_[slot]);
  void* request = nullptr;
  check(table_.isend(context_.get(), comms_.send.get(), sendSlots_[slot],
                     kNetMessageBytes, 0, sendSlotsRegistration_.handle(),
                     &request),
        "isend");
  if (request == nullptr) return false;
  freeSlots_.pop_back();
  sendFlight_.push_back({request, nullptr, kNetMessageBytes, slot});
  transfer.headerPosted = true;
  return true;
}

void NetChannel::ensureRegistered(Transfer& transfer, void* comm) {
  if (transfer.registration.handle() == nullptr)
    transfer.registration = NetRegistration(context_, comm, transfer.data,
                                            transfer.bytes, transfer.memory);
}

bool NetChannel::flushed(Transfer& receive) {
  if (receive.memory.pointerType == HETCCL_NET_MODULE_PTR_HOST ||
      receive.bytes == 0)
    return true;
  if (!receive.flushPosted) {
    check(table_.iflush(context_.get(), comms_.receive.get(), receive.data,
                        receive.bytes, receive.registration.handle(),
                        &receive.flush),
          "iflush");
    receive.flushPosted = true;
  }
  if (receive.flush == nullptr) return true;  // nothing to flush
  int done = 0;
  check(table_.test(context_.get(), receive.flush, &done, nullptr), "test");
  if (done) receive.flush = nullptr;
  return done != 0;
}

bool NetChannel::postPart(Transfer& transfer, bool sending) {
  std::deque<InFlight>& flight = sending ? sendFlight_ : receiveFlight_;
  const size_t headerReceive = !sending && headerRequest_ != nullptr;
  if (flight.size() + headerReceive >= kMaxInFlight) return false;
  void* comm = sending ? comms_.send.get() : comms_.receive.get();
  ensureRegistered(transfer, comm);
  const uint64_t part = transfer.partsPosted;
  char* at = transfer.data + part * transfer.partBytes;
  const size_t length = transfer.partLength(part);
  void* request = nullptr;
  if (sending)
    check(table_.isend(context_.get(), comm, at, length, 0,
                       transfer.registration.handle(), &request),
          "isend");
  else
    check(table_.irecv(context_.get(), comm, at, length, 0,
                       transfer.registration.handle(), &request),
          "irecv");
  if (request == nullptr) return false;
  flight.push_back({request, &transfer, length, -1});
  ++transfer.partsPosted;
  return true;
}

bool NetChannel::postHeaderReceive() {
  if (receiveFlight_.size() >= kMaxInFlight) return false;
  void* request = nullptr;
  check(table_.irecv(context_.get(), comms_.receive.get(), headerIn_,
                     kNetMessageBytes, 0, headerInRegistration_.handle(),
                     &request),
        "irecv");
  headerRequest_ = request;
  return request != nullptr;
}

bool NetChannel::testInFlight(std::deque<InFlight>& flight, bool sending) {
  bool moved = false;
  for (auto it = flight.begin(); it != flight.end();) {
    int done = 0;
    size_t bytes = 0;
    check(table_.test(context_.get(), it->request, &done, &bytes), "test");
    if (!done) {
      ++it;
      continue;
    }
    moved = true;
    if (it->slot >= 0) freeSlots_.push_back(it->slot);
    if (!sending && bytes != it->expectedBytes)
      fail(ncclRemoteError,
           "connection to rank %d: %zu bytes arrived for a %zu-byte part "
           "(the stream is out of step)",
           peer_, bytes, it->expectedBytes);
    if (it->transfer != nullptr) ++it->transfer->partsDone;
    it = flight.erase(it);
  }
  return moved;
}

void NetChannel::onHeader() {
  if (auto notice = NetDisagreementNotice::decode(headerIn_)) {
    Error error = callDisagreement(rank_, notice->sent, peer_, notice->posted);
    abort_->raise(error.code(), error.what());
    throw error;
  }
  std::optional<NetTransferHeader> header =
      NetTransferHeader::decode(headerIn_);
  if (!header || (header->bytes > 0 && header->partBytes == 0))
    fail(ncclRemoteError,
         "connection to rank %d: the stream is out of step (expected a "
         "transfer header)",
         peer_);
  raiseLatestCall(latestCall_, header->call);
  unclaimed_ = *header;
  bool waiting = false;
  for (const Transfer& t : receives_) waiting = waiting || !t.matched;
  if (!waiting) checkUnclaimed();
}

// Calls that disagree come before sizes that differ: they are the cause.
void NetChannel::match(Transfer& receive) {
  const NetTransferHeader header = *unclaimed_;
  unclaimed_.reset();
  awaitingCall_ = false;
  if (!callsAgree(header.call, receive.call))
    disagree(header.call, receive.call);
  if (header.transferBytes != receive.transferBytes ||
      header.bytes != receive.bytes)
    fail(ncclInvalidUsage,
         "rank %d sent a %llu-byte transfer where rank %d posted a %zu-byte "
         "receive: sends and receives on a link must match in order and size",
         peer_, static_cast<unsigned long long>(header.transferBytes), rank_,
         receive.transferBytes);
  receive.partBytes = header.partBytes;
  receive.parts = header.parts();
  receive.matched = true;
}

// A collective's transfer that no receive claims may belong to a call
// whose plan here never receives from this peer. (A send always meets a
// receive.)
void NetChannel::checkUnclaimed() {
  awaitingCall_ = false;
  if (!calls_ || unclaimed_->call.pointToPoint()) return;
  if (!calls_->made(unclaimed_->call.sequence)) {
    awaitingCall_ = true;
    return;
  }
  std::optional<CallSignature> own = calls_->find(unclaimed_->call.sequence);
  if (own && !callsAgree(unclaimed_->call, *own))
    disagree(unclaimed_->call, *own);
}

void NetChannel::disagree(const CallSignature& sent,
                          const CallSignature& posted) {
  sendNotice({sent, posted});
  Error error = callDisagreement(peer_, sent, rank_, posted);
  abort_->raise(error.code(), error.what());
  throw error;
}

// Where the peer reads a header next: not between a transfer's header and
// its last part. Waits a moment for it to leave, since the channel breaks
// right after.
void NetChannel::sendNotice(const NetDisagreementNotice& notice) {
  bool between = sendFlight_.size() < kMaxInFlight && !freeSlots_.empty();
  for (const Transfer& t : sends_)
    between = between && !(t.headerPosted && t.partsPosted < t.parts);
  void* request = nullptr;
  if (between) {
    const int slot = freeSlots_.back();
    notice.encode(sendSlots_[slot]);
    const int result = table_.isend(context_.get(), comms_.send.get(),
                                    sendSlots_[slot], kNetMessageBytes, 0,
                                    sendSlotsRegistration_.handle(), &request);
    if (result != 0) request = nullptr;
  }
  const auto deadline = std::chrono::steady_clock::now() + kNoticeGrace;
  int done = 0;
  while (request != nullptr && !done &&
         std::chrono::steady_clock::now() < deadline)
    if (table_.test(context_.get(), request, &done, nullptr) != 0) break;
  if (!done)
    LOG_INFO(kLogNet,
             "net transport (rank %d): could not tell rank %d that their calls "
             "disagree; it will see the connection close",
             rank_, peer_);
}

void NetChannel::completeFront(std::deque<Transfer>& transfers) {
  std::shared_ptr<PostedRequest> request = std::move(transfers.front().request);
  transfers.pop_front();  // its registration goes first
  request->complete();
}

void NetChannel::check(int result, const char* call) const {
  if (result == 0) return;
  const Error error = library_.failure(result, call);
  throw Error(error.code(),
              format("%s on the link with rank %d", error.what(), peer_));
}

void NetChannel::breakWith(const Error& error) {
  if (error_) return;
  if (busy())
    LOG_WARN(kLogNet, "net transport (rank %d): %s", rank_, error.what());
  else
    LOG_INFO(kLogNet, "net transport (rank %d): %s", rank_, error.what());
  error_ = error;
  for (std::deque<Transfer>* transfers : {&sends_, &receives_}) {
    for (Transfer& t : *transfers) t.request->failWith(error);
    transfers->clear();
  }
  // The plugin drops what is in flight when the comms close; registrations
  // go before the comms they were made on.
  sendFlight_.clear();
  receiveFlight_.clear();
  headerRequest_ = nullptr;
  sendSlotsRegistration_ = NetRegistration();
  headerInRegistration_ = NetRegistration();
  comms_.send.close();
  comms_.receive.close();
}

}  // namespace hetccl
