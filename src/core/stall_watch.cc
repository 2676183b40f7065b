#include "core/stall_watch.h"

#include <chrono>
#include <exception>

#include "util/log.h"

namespace hetccl {
namespace {

// How often the watch looks, as the call probe.
constexpr auto kTick = std::chrono::milliseconds(20);

}  // namespace

StallWatch::StallWatch(std::shared_ptr<const WaitingCall> waiting,
                       StallReport stalls, std::unique_ptr<StatusFile> status)
    : waiting_(std::move(waiting)),
      stalls_(std::move(stalls)),
      status_(std::move(status)) {
  thread_ = std::thread([this] { run(); });
}

StallWatch::~StallWatch() {
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StallWatch::run() {
  std::unique_lock<std::mutex> lock(stopMutex_);
  while (!wake_.wait_for(lock, kTick, [this] { return stopping_; })) {
    lock.unlock();
    try {
      stalls_.check(*waiting_);
      if (status_) status_->refresh(*waiting_);
    } catch (const std::exception& e) {
      LOG_INFO(kLogColl, "stall watch stops: %s", e.what());
      return;
    }
    lock.lock();
  }
}

}  // namespace hetccl
