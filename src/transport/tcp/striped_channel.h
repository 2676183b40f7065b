// The sockets to one peer and the transfers striped over them, both
// directions. Stripe n of a direction travels on socket n % sockets, with a
// StripeHeader in front, so the receiver reads every stripe straight into
// the posted buffer whatever order the sockets deliver in; a socket whose
// next stripe has no posted receive yet is simply not read, which leaves
// the data in the kernel and pushes back on the sender. Its header is read
// all the same: a stripe whose call disagrees with this rank's call of the
// same number (call_log.h) breaks the channel even if no receive of this
// rank will ever claim it, and so does a peer's notice that a stripe of
// this rank's did. Before it breaks the channel over calls that disagree,
// a rank sends that notice, so that its peer fails too, and raises the
// abort signal, since the ranks are out of step.
//
// A receive that combines (TcpLink::recvReduce) reads each stripe into a
// bounce buffer instead, a cache's worth at a time, and combines the whole
// elements it holds with the local buffer into the posted one; the bytes
// of an element cut by a read wait in the stripe's cursor for the next.
//
// Only the progress thread touches a channel, except for the counters.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "op/call_log.h"
#include "transport/tcp/tcp_wire.h"
#include "transport/tcp/transfer_queue.h"
#include "util/abort_signal.h"
#include "util/error.h"
#include "util/socket.h"

namespace hetccl {

// Payload bytes moved over a link, and the latest collective a stripe
// from the peer belonged to (Link::latestCallFrom), read by any thread.
struct LinkCounters {
  std::atomic<size_t> sent{0};
  std::atomic<size_t> received{0};
  std::atomic<uint64_t> latestCall{0};
};

class StripedChannel {
 public:
  // The largest element a combining receive combines, and the bounce
  // buffer it reads into.
  static constexpr size_t kMaxElementBytes = 8;
  static constexpr size_t kBounceBytes = 128 * 1024;

  // `abort` is raised on calls that disagree; `calls` (may be null) are
  // this rank's.
  StripedChannel(int rank, int peer, std::vector<Socket> sockets,
                 size_t stripeBytes, std::shared_ptr<LinkCounters> counters,
                 std::shared_ptr<AbortSignal> abort,
                 std::shared_ptr<const CallLog> calls);

  int peer() const { return peer_; }
  size_t socketCount() const { return sockets_.size(); }
  int fd(size_t socket) const { return sockets_[socket].fd(); }
  bool broken() const { return error_.has_value(); }
  // Whether a transfer is queued that has not completed.
  bool inFlight() const { return !sends_.empty() || !receives_.empty(); }

  // Queue a transfer; fail it at once if the channel is broken.
  void postSend(std::shared_ptr<PostedRequest> request, const void* data,
                size_t bytes, const LinkTransfer& whole,
                const CallSignature& call);
  void postRecv(
      std::shared_ptr<PostedRequest> request, void* data, size_t bytes,
      const LinkTransfer& whole, const CallSignature& call,
      const std::optional<ReceiveCombining>& combining = std::nullopt);

  // Move what socket `socket` takes / holds now, for as many stripes as
  // are posted. Throw the error that breaks the channel.
  void sendOn(size_t socket);
  void receiveOn(size_t socket);
  // The epoll events (EPOLLIN / EPOLLOUT) socket `socket` waits for now.
  uint32_t wantedEvents(size_t socket);
  // Whether a stripe that no receive claims yet belongs to a call this
  // rank has not made yet: recheckUnclaimed() then compares it once this
  // rank did.
  bool awaitingCall() const { return awaitingCall_; }
  void recheckUnclaimed();

  // The error for a socket that reported EPOLLERR / EPOLLHUP.
  Error socketFailure(size_t socket) const;
  // Fails every pending and future transfer with `error`, closes the
  // sockets and logs the loss.
  void breakWith(const Error& error);
  // The same without the log: for a transport that shuts down.
  void shutDown(const Error& error);

 private:
  // Where one socket stands in its current stripe, in one direction.
  struct Cursor {
    uint64_t stripe = 0;
    size_t headerDone = 0;
    size_t payloadDone = 0;
    uint8_t header[StripeHeader::kEncodedBytes] = {};
    bool checked = false;       // the header, against its transfer
    bool awaitingCall = false;  // unclaimed, of a call not made here yet
    // Of a combining receive: the first bytes of an element that a read
    // cut, to be combined with the rest.
    uint8_t carried[kMaxElementBytes] = {};
    size_t carriedBytes = 0;

    // Counts `moved` bytes of one system call against the header first,
    // then the payload; returns the payload's share.
    size_t advance(size_t moved);
  };

  // The rest of `cursor`'s header, then `room` payload bytes at `payload`,
  // as the parts of one system call; returns how many parts.
  static int pendingParts(Cursor& cursor, uint8_t* payload, size_t room,
                          iovec (&parts)[2]);
  // Where a receive reads its next payload bytes and how many fit: the
  // posted buffer, or for one that combines, the bounce buffer after the
  // bytes the cursor carries.
  uint8_t* receiveInto(Cursor& cursor, Transfer& transfer, size_t length,
                       size_t& room);
  // Combines the whole elements in the bounce buffer (the carried bytes
  // and `payload` read after them) into `transfer`, and carries the rest.
  void combineArrived(Cursor& cursor, Transfer& transfer, size_t payload);

  // Moves bytes for one step of `cursor`'s stripe; false if the socket
  // would block.
  bool sendStep(size_t socket, Cursor& cursor, Transfer& transfer);
  bool receiveStep(size_t socket, Cursor& cursor, Transfer& transfer);
  // Reads the header of a stripe that no receive claims yet, and checks
  // it as far as it can.
  void readAhead(size_t socket, Cursor& cursor);
  void checkHeaderOnce(Cursor& cursor, const Transfer& transfer, size_t length);
  // The header as a stripe header, or the peer's notice thrown.
  StripeHeader decodeHeader(const Cursor& cursor);
  void checkUnclaimed(Cursor& cursor);
  // Sends the notice, raises the abort signal and throws: the peer's
  // transfer belongs to `sent`, this rank's call of it was `posted`.
  [[noreturn]] void disagree(const CallSignature& sent,
                             const CallSignature& posted);
  void sendNotice(const DisagreementNotice& notice);
  void finishStripe(size_t socket, Cursor& cursor, TransferQueue& queue,
                    Transfer& transfer);
  [[noreturn]] void lost(const char* what) const;

  const int rank_;
  const int peer_;
  const size_t stripeBytes_;
  std::vector<Socket> sockets_;
  std::shared_ptr<LinkCounters> counters_;
  const std::shared_ptr<AbortSignal> abort_;
  const std::shared_ptr<const CallLog> calls_;
  TransferQueue sends_;
  TransferQueue receives_;
  std::vector<Cursor> sendCursors_;
  std::vector<Cursor> receiveCursors_;
  std::vector<uint8_t> bounce_;  // for receives that combine, once one came
  bool awaitingCall_ = false;    // some receive cursor's is
  std::optional<Error> error_;
};

}  // namespace hetccl
