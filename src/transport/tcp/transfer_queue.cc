#include "transport/tcp/transfer_queue.h"

#include <algorithm>

namespace hetccl {

void TransferQueue::push(std::shared_ptr<PostedRequest> request, void* data,
                         size_t bytes, const LinkTransfer& whole,
                         const CallSignature& call,
                         const std::optional<ReceiveCombining>& combining) {
  Transfer t;
  t.request = std::move(request);
  t.data = static_cast<uint8_t*>(data);
  t.bytes = bytes;
  t.whole = whole;
  t.call = call;
  t.combining = combining;
  t.firstStripe = nextStripe_;
  t.stripeCount = (bytes + stripeBytes_ - 1) / stripeBytes_;
  nextStripe_ += t.stripeCount;
  transfers_.push_back(std::move(t));
  completeFinishedFront();
}

Transfer* TransferQueue::find(uint64_t stripe) {
  // The last transfer that starts at or before `stripe`; zero-byte
  // transfers that start there too come before it, so they are skipped.
  auto after = std::upper_bound(
      transfers_.begin(), transfers_.end(), stripe,
      [](uint64_t s, const Transfer& t) { return s < t.firstStripe; });
  if (after == transfers_.begin()) return nullptr;
  Transfer& t = *(after - 1);
  return stripe < t.firstStripe + t.stripeCount ? &t : nullptr;
}

void TransferQueue::stripeDone(Transfer& transfer) {
  ++transfer.stripesDone;
  completeFinishedFront();
}

void TransferQueue::completeFinishedFront() {
  while (!transfers_.empty() &&
         transfers_.front().stripesDone == transfers_.front().stripeCount) {
    std::shared_ptr<PostedRequest> request =
        std::move(transfers_.front().request);
    transfers_.pop_front();
    request->complete();
  }
}

void TransferQueue::failAll(const Error& error) {
  for (auto& t : transfers_) t.request->failWith(error);
  transfers_.clear();
}

}  // namespace hetccl
