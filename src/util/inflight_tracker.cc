#include "util/inflight_tracker.h"

#include <chrono>

namespace hetccl {

struct InflightTracker::Ticket::Token {
  explicit Token(std::shared_ptr<Count> counted) : count(std::move(counted)) {
    std::lock_guard<std::mutex> lock(count->mutex);
    ++count->inflight;
  }
  Token(const Token&) = delete;
  Token& operator=(const Token&) = delete;
  ~Token() {
    std::lock_guard<std::mutex> lock(count->mutex);
    if (--count->inflight == 0) count->idle.notify_all();
  }
  std::shared_ptr<Count> count;
};

InflightTracker::InflightTracker() : count_(std::make_shared<Count>()) {}

InflightTracker::Ticket InflightTracker::begin() {
  return Ticket(std::make_shared<Ticket::Token>(count_));
}

bool InflightTracker::drain(double timeoutSeconds) {
  std::unique_lock<std::mutex> lock(count_->mutex);
  auto limit = std::chrono::duration<double>(timeoutSeconds);
  return count_->idle.wait_for(lock, limit,
                               [this] { return count_->inflight == 0; });
}

}  // namespace hetccl
