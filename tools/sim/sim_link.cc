#include "sim_link.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "algo/pieced_link.h"

namespace hetccl::sim {

void SimRequest::wait(const AbortSignal&, double) {
  if (stream_ == nullptr) return waitHere();
  stream_->enqueue([self = shared_from_this()] { self->waitHere(); });
}

void SimRequest::waitHere() {
  while (!complete_) {
    waiter_ = scheduler_.current();
    scheduler_.suspend();
  }
  waiter_ = -1;
}

void SimRequest::complete() {
  complete_ = true;
  if (waiter_ >= 0) scheduler_.resume(waiter_);
}

std::shared_ptr<SimRequest> Wires::post(int self, int peer, TransferWay way,
                                        size_t bytes, SimStream* stream) {
  auto request =
      std::make_shared<SimRequest>(scheduler_, peer, way, bytes, stream);
  if (stream != nullptr && way == TransferWay::kSend)
    stream->enqueue([this, self, request] { post(self, request); });
  else
    post(self, request);
  return request;
}

void Wires::post(int self, const std::shared_ptr<SimRequest>& request) {
  const bool sending = request->way() == TransferWay::kSend;
  const int src = sending ? self : request->peer();
  const int dst = sending ? request->peer() : self;
  Queue& queue = queues_[{src, dst}];
  (sending ? queue.sends : queue.receives).push_back(request);
  if (sending) ++sent_[self];
  match(src, dst, queue);
}

void Wires::match(int src, int dst, Queue& queue) {
  while (!queue.sends.empty() && !queue.receives.empty()) {
    std::shared_ptr<SimRequest> send = queue.sends.front();
    std::shared_ptr<SimRequest> receive = queue.receives.front();
    queue.sends.pop_front();
    queue.receives.pop_front();
    if (send->bytes() != receive->bytes())
      throw std::runtime_error("rank " + std::to_string(src) + " sends " +
                               std::to_string(send->bytes()) +
                               " bytes to rank " + std::to_string(dst) +
                               ", which receives " +
                               std::to_string(receive->bytes()));
    const double arrival =
        network_.transfer(src, dst, send->bytes(), scheduler_.now());
    scheduler_.at(arrival, [send, receive] {
      send->complete();
      receive->complete();
    });
  }
}

void StagingCount::add(TransferWay way, size_t bytes) {
  const bool sending = way == TransferWay::kSend;
  if (bytes == 0) return;  // an empty transfer is not staged
  SlotSizes& slots = sending ? sends_ : receives_;
  // Its first piece is the transfer's largest.
  const size_t piece =
      std::min(bytes, PiecedLink::pieceBytesFor(largest_, bytes));
  if (const size_t size = slots.sizeFor(piece)) slots.grow(size);
}

std::shared_ptr<TransferRequest> SimLink::send(const void*, size_t bytes,
                                               const CallSignature&) {
  sent_ += bytes;
  if (staging_) staging_->add(TransferWay::kSend, bytes);
  return wires_.post(self_, peer_, TransferWay::kSend, bytes, stream_);
}

std::shared_ptr<TransferRequest> SimLink::recv(void*, size_t bytes,
                                               const CallSignature&) {
  received_ += bytes;
  if (staging_) staging_->add(TransferWay::kReceive, bytes);
  return wires_.post(self_, peer_, TransferWay::kReceive, bytes, stream_);
}

}  // namespace hetccl::sim
