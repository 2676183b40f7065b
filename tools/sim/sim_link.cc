#include "sim_link.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "algo/pieced_link.h"

namespace hetccl::sim {

void SimRequest::wait(const AbortSignal&, double) {
  if (stream_ == nullptr) return waitHere();
  if (ring_ != nullptr)
    return stream_->enqueue(
        [ring = ring_, index = ringIndex_] { ring->consumeThrough(index); });
  stream_->enqueue([self = shared_from_this()] { self->waitHere(); });
}

void SimRequest::waitHere() {
  while (!done()) {
    waiter_ = scheduler_.current();
    scheduler_.suspend();
  }
}

// Whoever makes it done wakes the waiter, once.
void SimRequest::posted() {
  posted_ = true;
  if (done() && waiter_ >= 0) scheduler_.resume(std::exchange(waiter_, -1));
}

void SimRequest::complete() {
  complete_ = true;
  if (waiter_ >= 0) scheduler_.resume(std::exchange(waiter_, -1));
  if (then_) std::exchange(then_, nullptr)();
}

std::shared_ptr<SimRequest> Wires::request(int, int peer, TransferWay way,
                                           size_t bytes, SimStream* stream,
                                           bool staged) {
  return std::make_shared<SimRequest>(scheduler_, peer, way, bytes, stream,
                                      staged);
}

void Wires::post(int self, const std::shared_ptr<SimRequest>& request) {
  const bool sending = request->way() == TransferWay::kSend;
  const int src = sending ? self : request->peer();
  const int dst = sending ? request->peer() : self;
  Queue& queue = queues_[{src, dst}];
  (sending ? queue.sends : queue.receives).push_back(request);
  request->posted();
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
        network_.transfer(src, dst, send->bytes(), scheduler_.now(),
                          {send->staged(), receive->staged()});
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

SimLink::SimLink(Scheduler& scheduler, Wires& wires, int self, int peer,
                 const GpuSide* gpu, bool staged)
    : wires_(wires),
      self_(self),
      peer_(peer),
      gpu_(gpu),
      staged_(gpu != nullptr && staged) {
  if (gpu == nullptr) return;
  staging_.emplace(gpu->largestPiece);
  if (!staged_) return;
  sends_.emplace(scheduler);
  receives_.emplace(wires, self);
}

size_t SimLink::piecesOf(size_t bytes) const {
  const size_t piece = PiecedLink::pieceBytesFor(gpu_->largestPiece, bytes);
  return (bytes + piece - 1) / piece;
}

std::shared_ptr<TransferRequest> SimLink::send(const void* data, size_t bytes,
                                               const CallSignature&,
                                               TransferPiece) {
  sent_ += bytes;
  if (gpu_ == nullptr)
    return wires_.post(self_, peer_, TransferWay::kSend, bytes);
  staging_->add(TransferWay::kSend, bytes);
  if (staged_) return stagedSend(data, bytes);
  auto request =
      wires_.request(self_, peer_, TransferWay::kSend, bytes, gpu_->stream);
  gpu_->stream->enqueue(
      [this, request] { wires_.post(self_, request); });  // its data is ready
  return request;
}

std::shared_ptr<TransferRequest> SimLink::stagedSend(const void* data,
                                                     size_t bytes) {
  auto request = wires_.request(self_, peer_, TransferWay::kSend, bytes,
                                gpu_->stream, true);
  if (!gpu_->unchangedInputs || !gpu_->unchangedInputs->hold(data, bytes))
    gpu_->up->follow(*gpu_->stream);
  const size_t slots = ringSlotsFor(piecesOf(bytes));
  gpu_->up->enqueue([this, request, slots] {
    sends_->take(slots);
    request->whenComplete([this, slots] { sends_->give(slots); });
    wires_.post(self_, request);
  });
  return request;
}

std::shared_ptr<TransferRequest> SimLink::recv(void*, size_t bytes,
                                               const CallSignature&,
                                               TransferPiece) {
  received_ += bytes;
  if (gpu_ == nullptr)
    return wires_.post(self_, peer_, TransferWay::kReceive, bytes);
  staging_->add(TransferWay::kReceive, bytes);
  if (staged_) return stagedRecv(bytes);
  auto request =
      wires_.request(self_, peer_, TransferWay::kReceive, bytes, gpu_->stream);
  wires_.post(self_, request);
  return request;
}

std::shared_ptr<TransferRequest> SimLink::stagedRecv(size_t bytes) {
  auto request = wires_.request(self_, peer_, TransferWay::kReceive, bytes,
                                gpu_->stream, true);
  request->waitThrough(&*receives_, receives_->add(request, piecesOf(bytes)));
  return request;
}

}  // namespace hetccl::sim
