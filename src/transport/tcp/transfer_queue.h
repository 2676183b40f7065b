// The posted transfers of one direction of a tcp link, in posting order,
// cut into numbered stripes. Stripe numbers run on across transfers, so
// both ends of a link derive the same numbering from the same sequence of
// transfer sizes; stripe n travels on socket n % sockets.
//
// Only the progress thread touches a queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "op/call_signature.h"
#include "transport/link.h"
#include "transport/posted_request.h"

namespace hetccl {

// What a receive that combines (TcpLink::recvReduce) combines the bytes
// that arrive with: `local`, the transfer's counterpart of its buffer.
struct ReceiveCombining {
  const uint8_t* local = nullptr;
  ReceiveCombine how;
};

// The link's transfer that a lane's transfer is (a part of): its number
// among the link's transfers that way, and its size. Both ends number and
// size their transfers alike, so each stripe's header carries them for the
// receiver to compare with what it posted.
struct LinkTransfer {
  uint64_t number = 0;
  uint64_t bytes = 0;
};

struct Transfer {
  std::shared_ptr<PostedRequest> request;
  uint8_t* data = nullptr;
  size_t bytes = 0;
  LinkTransfer whole;
  uint64_t firstStripe = 0;
  uint64_t stripeCount = 0;
  uint64_t stripesDone = 0;
  CallSignature call;  // of the user call the transfer belongs to
  std::optional<ReceiveCombining> combining;

  // The payload of stripe `stripe` (which must be one of this transfer's).
  uint8_t* stripeData(uint64_t stripe, size_t stripeBytes) const {
    return data + (stripe - firstStripe) * stripeBytes;
  }
  size_t stripeLength(uint64_t stripe, size_t stripeBytes) const {
    size_t offset = (stripe - firstStripe) * stripeBytes;
    return bytes - offset < stripeBytes ? bytes - offset : stripeBytes;
  }
};

class TransferQueue {
 public:
  explicit TransferQueue(size_t stripeBytes) : stripeBytes_(stripeBytes) {}

  size_t stripeBytes() const { return stripeBytes_; }
  bool empty() const { return transfers_.empty(); }

  // Appends a transfer; a zero-byte one completes as soon as everything
  // before it has.
  void push(std::shared_ptr<PostedRequest> request, void* data, size_t bytes,
            const LinkTransfer& whole, const CallSignature& call,
            const std::optional<ReceiveCombining>& combining = std::nullopt);
  // The transfer that stripe `stripe` belongs to; null if it was not
  // posted yet (or already completed).
  Transfer* find(uint64_t stripe);
  // Records one finished stripe of `transfer` and completes, in posting
  // order, every transfer whose stripes are all done.
  void stripeDone(Transfer& transfer);
  // Fails and drops every queued transfer.
  void failAll(const Error& error);

 private:
  void completeFinishedFront();

  const size_t stripeBytes_;
  uint64_t nextStripe_ = 0;
  std::deque<Transfer> transfers_;
};

}  // namespace hetccl
