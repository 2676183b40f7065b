#include "transport/tcp/striped_channel.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "op/call_disagreement.h"
#include "runtime/host/host_reduce.h"
#include "transport/link.h"
#include "util/dtype.h"
#include "util/log.h"

namespace hetccl {
namespace {

constexpr size_t kHeaderBytes = StripeHeader::kEncodedBytes;

}  // namespace

StripedChannel::StripedChannel(int rank, int peer, std::vector<Socket> sockets,
                               size_t stripeBytes,
                               std::shared_ptr<LinkCounters> counters,
                               std::shared_ptr<AbortSignal> abort,
                               std::shared_ptr<const CallLog> calls)
    : rank_(rank),
      peer_(peer),
      stripeBytes_(stripeBytes),
      sockets_(std::move(sockets)),
      counters_(std::move(counters)),
      abort_(std::move(abort)),
      calls_(std::move(calls)),
      sends_(stripeBytes),
      receives_(stripeBytes),
      sendCursors_(sockets_.size()),
      receiveCursors_(sockets_.size()) {
  for (size_t i = 0; i < sockets_.size(); ++i) {
    sendCursors_[i].stripe = i;
    receiveCursors_[i].stripe = i;
  }
}

void StripedChannel::postSend(std::shared_ptr<PostedRequest> request,
                              const void* data, size_t bytes,
                              const LinkTransfer& whole,
                              const CallSignature& call) {
  if (error_) return request->failWith(*error_);
  // The queue serves sends and receives alike; a send's bytes are only
  // ever read.
  sends_.push(std::move(request), const_cast<void*>(data), bytes, whole, call);
}

void StripedChannel::postRecv(
    std::shared_ptr<PostedRequest> request, void* data, size_t bytes,
    const LinkTransfer& whole, const CallSignature& call,
    const std::optional<ReceiveCombining>& combining) {
  if (error_) return request->failWith(*error_);
  if (combining && bounce_.empty()) bounce_.resize(kBounceBytes);
  receives_.push(std::move(request), data, bytes, whole, call, combining);
}

// A header is read whether or not a receive claims its stripe; the
// payload only into a posted receive.
uint32_t StripedChannel::wantedEvents(size_t socket) {
  if (error_) return 0;
  uint32_t events = 0;
  const Cursor& in = receiveCursors_[socket];
  if (sends_.find(sendCursors_[socket].stripe)) events |= EPOLLOUT;
  if (in.headerDone < kHeaderBytes || receives_.find(in.stripe))
    events |= EPOLLIN;
  return events;
}

void StripedChannel::sendOn(size_t socket) {
  Cursor& cursor = sendCursors_[socket];
  while (!error_) {
    Transfer* transfer = sends_.find(cursor.stripe);
    if (transfer == nullptr || !sendStep(socket, cursor, *transfer)) return;
  }
}

void StripedChannel::receiveOn(size_t socket) {
  Cursor& cursor = receiveCursors_[socket];
  while (!error_) {
    Transfer* transfer = receives_.find(cursor.stripe);
    if (transfer == nullptr) return readAhead(socket, cursor);
    if (!receiveStep(socket, cursor, *transfer)) return;
  }
}

void StripedChannel::readAhead(size_t socket, Cursor& cursor) {
  if (cursor.headerDone == kHeaderBytes) return;
  ssize_t got = ::read(sockets_[socket].fd(), cursor.header + cursor.headerDone,
                       kHeaderBytes - cursor.headerDone);
  if (got == 0) {
    errno = 0;
    lost("receiving");
  }
  if (got < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return;
    lost("receiving");
  }
  cursor.advance(static_cast<size_t>(got));
  if (cursor.headerDone == kHeaderBytes) checkUnclaimed(cursor);
}

void StripedChannel::recheckUnclaimed() {
  awaitingCall_ = false;
  for (Cursor& cursor : receiveCursors_) {
    if (!cursor.awaitingCall) continue;
    cursor.awaitingCall = false;
    if (!receives_.find(cursor.stripe)) checkUnclaimed(cursor);
  }
}

// Compared with this rank's call of the same number: a collective's stripe
// that no receive claims may belong to a call whose plan here never
// receives from this peer. (A send always meets a receive.)
void StripedChannel::checkUnclaimed(Cursor& cursor) {
  const StripeHeader header = decodeHeader(cursor);
  if (!calls_ || header.call.pointToPoint()) return;
  if (!calls_->made(header.call.sequence)) {
    cursor.awaitingCall = awaitingCall_ = true;
    return;
  }
  std::optional<CallSignature> own = calls_->find(header.call.sequence);
  if (own && !callsAgree(header.call, *own)) disagree(header.call, *own);
}

size_t StripedChannel::Cursor::advance(size_t moved) {
  const size_t headerPart = std::min(moved, kHeaderBytes - headerDone);
  headerDone += headerPart;
  payloadDone += moved - headerPart;
  return moved - headerPart;
}

int StripedChannel::pendingParts(Cursor& cursor, uint8_t* payload, size_t room,
                                 iovec (&parts)[2]) {
  int count = 0;
  if (cursor.headerDone < kHeaderBytes)
    parts[count++] = {cursor.header + cursor.headerDone,
                      kHeaderBytes - cursor.headerDone};
  parts[count++] = {payload, room};
  return count;
}

bool StripedChannel::sendStep(size_t socket, Cursor& cursor,
                              Transfer& transfer) {
  size_t length = transfer.stripeLength(cursor.stripe, stripeBytes_);
  if (cursor.headerDone == 0 && cursor.payloadDone == 0) {
    StripeHeader header;
    header.stripe = cursor.stripe;
    header.transfer = transfer.whole.number;
    header.transferBytes = transfer.whole.bytes;
    header.length = static_cast<uint32_t>(length);
    header.call = transfer.call;
    header.encode(cursor.header);
  }
  // Header and payload leave in one system call.
  iovec parts[2];
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = pendingParts(
      cursor,
      transfer.stripeData(cursor.stripe, stripeBytes_) + cursor.payloadDone,
      length - cursor.payloadDone, parts);
  ssize_t sent =
      ::sendmsg(sockets_[socket].fd(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent < 0) {
    if (errno == EINTR) return true;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    lost("sending");
  }
  const size_t payload = cursor.advance(static_cast<size_t>(sent));
  counters_->sent.fetch_add(payload, std::memory_order_relaxed);
  if (cursor.payloadDone == length)
    finishStripe(socket, cursor, sends_, transfer);
  return true;
}

bool StripedChannel::receiveStep(size_t socket, Cursor& cursor,
                                 Transfer& transfer) {
  size_t length = transfer.stripeLength(cursor.stripe, stripeBytes_);
  checkHeaderOnce(cursor, transfer, length);  // read ahead
  size_t room = 0;
  uint8_t* into = receiveInto(cursor, transfer, length, room);
  iovec parts[2];
  const int count = pendingParts(cursor, into, room, parts);
  ssize_t got = ::readv(sockets_[socket].fd(), parts, count);
  if (got == 0) {
    errno = 0;
    lost("receiving");
  }
  if (got < 0) {
    if (errno == EINTR) return true;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    lost("receiving");
  }
  const size_t payload = cursor.advance(static_cast<size_t>(got));
  checkHeaderOnce(cursor, transfer, length);
  if (transfer.combining) combineArrived(cursor, transfer, payload);
  counters_->received.fetch_add(payload, std::memory_order_relaxed);
  if (cursor.headerDone == kHeaderBytes && cursor.payloadDone == length)
    finishStripe(socket, cursor, receives_, transfer);
  return true;
}

uint8_t* StripedChannel::receiveInto(Cursor& cursor, Transfer& transfer,
                                     size_t length, size_t& room) {
  room = length - cursor.payloadDone;
  if (!transfer.combining)
    return transfer.stripeData(cursor.stripe, stripeBytes_) +
           cursor.payloadDone;
  std::memcpy(bounce_.data(), cursor.carried, cursor.carriedBytes);
  room = std::min(room, kBounceBytes - cursor.carriedBytes);
  return bounce_.data() + cursor.carriedBytes;
}

// The stripe holds whole elements and starts on one (TcpLink cuts parts
// on multiples of 64 bytes, and combines only over stripes of whole
// elements), so the bounce buffer's first byte is an element's.
void StripedChannel::combineArrived(Cursor& cursor, Transfer& transfer,
                                    size_t payload) {
  const ReceiveCombining& combining = *transfer.combining;
  const size_t held = cursor.carriedBytes + payload;
  const size_t elt = dtypeSize(combining.how.reduction.dtype);
  const size_t whole = held / elt * elt;
  const size_t offset = transfer.stripeData(cursor.stripe, stripeBytes_) -
                        transfer.data + cursor.payloadDone - held;
  const void* sources[2] = {combining.local + offset, bounce_.data()};
  if (combining.how.incomingFirst) std::swap(sources[0], sources[1]);
  hostReduce(transfer.data + offset, sources, 2, whole / elt,
             combining.how.reduction);
  cursor.carriedBytes = held - whole;
  std::memcpy(cursor.carried, bounce_.data() + whole, cursor.carriedBytes);
}

// Calls that disagree come before transfers that differ: they are the
// cause. A stripe of another transfer than the receive's (the one before
// it sent nothing on this lane: it had no bytes) may well be of the same
// size; its number tells.
void StripedChannel::checkHeaderOnce(Cursor& cursor, const Transfer& transfer,
                                     size_t length) {
  if (cursor.headerDone < kHeaderBytes || cursor.checked) return;
  cursor.checked = true;
  const StripeHeader header = decodeHeader(cursor);
  if (!callsAgree(header.call, transfer.call))
    disagree(header.call, transfer.call);
  if (header.transfer != transfer.whole.number ||
      header.transferBytes != transfer.whole.bytes || header.length != length)
    fail(ncclInvalidUsage,
         "rank %d sent a %llu-byte transfer (its transfer %llu on the link) "
         "where rank %d posted a %llu-byte receive (its transfer %llu): "
         "sends and receives on a link must match in order and size",
         peer_, static_cast<unsigned long long>(header.transferBytes),
         static_cast<unsigned long long>(header.transfer + 1), rank_,
         static_cast<unsigned long long>(transfer.whole.bytes),
         static_cast<unsigned long long>(transfer.whole.number + 1));
}

StripeHeader StripedChannel::decodeHeader(const Cursor& cursor) {
  if (auto notice = DisagreementNotice::decode(cursor.header)) {
    Error error = callDisagreement(rank_, notice->sent, peer_, notice->posted);
    abort_->raise(error.code(), error.what());
    throw error;
  }
  std::optional<StripeHeader> header = StripeHeader::decode(cursor.header);
  if (!header || header->stripe != cursor.stripe)
    fail(ncclRemoteError,
         "connection to rank %d lost: the stream is out of step (expected "
         "stripe %llu)",
         peer_, static_cast<unsigned long long>(cursor.stripe));
  raiseLatestCall(counters_->latestCall, header->call);
  return *header;
}

void StripedChannel::disagree(const CallSignature& sent,
                              const CallSignature& posted) {
  sendNotice({sent, posted});
  Error error = callDisagreement(peer_, sent, rank_, posted);
  abort_->raise(error.code(), error.what());
  throw error;
}

// On a socket between two stripes (so the peer reads it as a header), at
// once or not at all: the channel breaks right after.
void StripedChannel::sendNotice(const DisagreementNotice& notice) {
  uint8_t wire[DisagreementNotice::kEncodedBytes];
  notice.encode(wire);
  for (size_t s = 0; s < sockets_.size(); ++s) {
    const Cursor& out = sendCursors_[s];
    if (out.headerDone != 0 || out.payloadDone != 0) continue;
    ssize_t sent = ::send(sockets_[s].fd(), wire, sizeof wire,
                          MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent == static_cast<ssize_t>(sizeof wire)) return;
  }
  LOG_INFO(kLogNet,
           "tcp transport (rank %d): could not tell rank %d that their calls "
           "disagree; it will see the connection close",
           rank_, peer_);
}

void StripedChannel::finishStripe(size_t socket, Cursor& cursor,
                                  TransferQueue& queue, Transfer& transfer) {
  cursor.stripe += sockets_.size();
  cursor.headerDone = 0;
  cursor.payloadDone = 0;
  cursor.checked = false;
  cursor.awaitingCall = false;
  cursor.carriedBytes = 0;
  queue.stripeDone(transfer);  // may complete and drop `transfer`
}

void StripedChannel::lost(const char* what) const {
  int err = errno;
  if (err == 0)
    fail(ncclRemoteError,
         "connection to rank %d lost: peer closed the connection", peer_);
  fail(ncclRemoteError, "connection to rank %d lost: %s failed: %s", peer_,
       what, std::strerror(err));
}

Error StripedChannel::socketFailure(size_t socket) const {
  int err = 0;
  socklen_t length = sizeof(err);
  getsockopt(sockets_[socket].fd(), SOL_SOCKET, SO_ERROR, &err, &length);
  return Error(ncclRemoteError,
               format("connection to rank %d lost: %s", peer_,
                      err != 0 ? std::strerror(err) : "connection closed"));
}

void StripedChannel::breakWith(const Error& error) {
  if (error_) return;
  bool pending = !sends_.empty() || !receives_.empty();
  if (pending) {
    LOG_WARN(kLogNet, "tcp transport (rank %d): %s", rank_, error.what());
  } else {
    LOG_INFO(kLogNet, "tcp transport (rank %d): %s", rank_, error.what());
  }
  shutDown(error);
}

void StripedChannel::shutDown(const Error& error) {
  if (!error_) error_ = error;
  sends_.failAll(*error_);
  receives_.failAll(*error_);
  for (auto& socket : sockets_) socket.close();
}

}  // namespace hetccl
