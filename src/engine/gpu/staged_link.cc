#include "engine/gpu/staged_link.h"

#include <algorithm>

namespace hetccl {
namespace {

// A transfer whose GPU work is all enqueued (a send, or an empty
// transfer, which the link never carries): the plan may reuse its buffer
// in stream order, and the proxy finishes the rest.
class EnqueuedTransfer : public TransferRequest {
 public:
  bool done() override { return true; }
  void wait(const AbortSignal&, double) override {}
};

std::shared_ptr<TransferRequest> enqueuedTransfer() {
  static const auto enqueued = std::make_shared<EnqueuedTransfer>();
  return enqueued;
}

class StagedReceive : public TransferRequest {
 public:
  StagedReceive(StagedLink& link, uint64_t number)
      : link_(link), number_(number) {}
  // Done once its copies are enqueued: what the plan enqueues next sees
  // the bytes.
  bool done() override {
    link_.consumeThrough(number_);
    return true;
  }
  void wait(const AbortSignal&, double) override {
    link_.consumeThrough(number_);
  }

 private:
  StagedLink& link_;
  uint64_t number_;
};

}  // namespace

StagingRing& StagingRings::make(const DeviceModule& module, size_t slotBytes,
                                size_t slots) {
  auto ring = std::make_unique<StagingRing>(module, slotBytes, slots);
  std::lock_guard<std::mutex> lock(mutex_);
  rings_.push_back(std::move(ring));
  return *rings_.back();
}

void StagingRings::releaseWaits() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& ring : rings_) ring->raiseProxyCounter(UINT64_MAX);
}

// The rings are pinned on a link's first transfer each way: most links of
// a large communicator never carry any (plans talk to the matching ranks
// of the other domains).
StagedLink::Lane& StagedLink::opened(Lane& lane,
                                     StagingProxy::Direction direction) {
  if (lane.ring == nullptr) {
    lane.ring = &rings_.make(path_.module, path_.slotBytes, path_.slots);
    lane.queue = &path_.proxy.addQueue(inner(), *lane.ring, direction);
  }
  return lane;
}

void StagedLink::check(int status, const char* what) const {
  path_.module.check(status, what);
}

std::shared_ptr<TransferRequest> StagedLink::send(const void* data,
                                                  size_t bytes) {
  if (bytes == 0) return enqueuedTransfer();
  Lane& d = opened(sends_, StagingProxy::Direction::kSend);
  const StagingRing& ring = *d.ring;
  const auto& api = path_.module.api();
  const auto* source = static_cast<const char*>(data);
  for (size_t offset = 0; offset < bytes; offset += ring.slotBytes()) {
    const size_t piece = std::min(ring.slotBytes(), bytes - offset);
    const uint64_t n = d.pieces++;
    if (n >= ring.slots()) {
      markPhase(path_.timeline, StreamPhase::TransferWaits);
      check(api.waitValue64(path_.stream, ring.proxyCounter(),
                            n - ring.slots() + 1),
            "waiting for a free staging slot");
    }
    markPhase(path_.timeline, StreamPhase::StagingCopies);
    check(api.copyAsync(ring.slot(n), source + offset, piece, path_.stream),
          "copying bytes to send from the GPU");
    check(api.writeValue64(path_.stream, ring.streamCounter(), n + 1),
          "signalling a staged piece");
    path_.proxy.post(*d.queue, n, piece);
  }
  return enqueuedTransfer();
}

std::shared_ptr<TransferRequest> StagedLink::recv(void* data, size_t bytes) {
  if (bytes == 0) return enqueuedTransfer();
  Lane& d = opened(receives_, StagingProxy::Direction::kReceive);
  unconsumed_.push_back({static_cast<char*>(data), bytes, d.pieces});
  for (size_t offset = 0; offset < bytes; offset += d.ring->slotBytes())
    path_.proxy.post(*d.queue, d.pieces++,
                     std::min(d.ring->slotBytes(), bytes - offset));
  return std::make_shared<StagedReceive>(*this, receivesPosted_++);
}

void StagedLink::finishLaunch() {
  if (receivesConsumed_ < receivesPosted_) consumeThrough(receivesPosted_ - 1);
  if (sends_.awaited == sends_.pieces) return;
  markPhase(path_.timeline, StreamPhase::TransferWaits);
  check(path_.module.api().waitValue64(
            path_.stream, sends_.ring->proxyCounter(), sends_.pieces),
        "waiting for staged sends");
  sends_.awaited = sends_.pieces;
}

void StagedLink::consumeThrough(uint64_t receive) {
  const auto& api = path_.module.api();
  while (receivesConsumed_ <= receive) {
    const PostedReceive posted = unconsumed_.front();
    unconsumed_.pop_front();
    ++receivesConsumed_;
    const StagingRing& ring = *receives_.ring;
    uint64_t n = posted.firstPiece;
    for (size_t offset = 0; offset < posted.bytes;
         offset += ring.slotBytes(), ++n) {
      const size_t piece = std::min(ring.slotBytes(), posted.bytes - offset);
      markPhase(path_.timeline, StreamPhase::TransferWaits);
      check(api.waitValue64(path_.stream, ring.proxyCounter(), n + 1),
            "waiting for a staged piece");
      markPhase(path_.timeline, StreamPhase::StagingCopies);
      check(api.copyAsync(posted.target + offset, ring.slot(n), piece,
                          path_.stream),
            "copying received bytes to the GPU");
      check(api.writeValue64(path_.stream, ring.streamCounter(), n + 1),
            "freeing a staging slot");
    }
  }
}

}  // namespace hetccl
