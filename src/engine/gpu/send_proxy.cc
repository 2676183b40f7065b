#include "engine/gpu/send_proxy.h"

#include <chrono>
#include <optional>

#include "util/error.h"

namespace hetccl {

// What a plan waits on: done once the proxy saw the link finish.
class SendProxy::Request : public TransferRequest {
 public:
  void complete(std::optional<Error> failure) {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    failure_ = std::move(failure);
    changed_.notify_all();
  }
  bool done() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return finishedOrThrow();
  }
  void wait(const AbortSignal& abort, double timeoutSeconds) override {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(timeoutSeconds);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!finishedOrThrow()) {
      abort.throwIfRaised();
      if (timeoutSeconds > 0 && std::chrono::steady_clock::now() > deadline)
        fail(ncclSystemError,
             "a staged send across domains did not complete within %g s",
             timeoutSeconds);
      changed_.wait_for(lock, std::chrono::milliseconds(10));
    }
  }

 private:
  bool finishedOrThrow() const {
    if (failure_) throw *failure_;
    return finished_;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool finished_ = false;
  std::optional<Error> failure_;
};

SendProxy::SendProxy(const StreamProgress& progress, StagingPool& pool,
                     std::shared_ptr<AbortSignal> abort)
    : progress_(progress), pool_(pool), abort_(std::move(abort)) {
  thread_ = std::thread([this] { run(); });
}

SendProxy::~SendProxy() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<TransferRequest> SendProxy::post(Link& link, char* slot,
                                                 size_t bytes, uint64_t mark) {
  auto request = std::make_shared<Request>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    inbox_.push_back({&link, slot, bytes, mark, request, nullptr});
  }
  wake_.notify_one();
  return request;
}

// Polls: the stream's marks and the links' requests have no way to wake
// this thread, so it naps briefly whenever nothing moved.
void SendProxy::run() {
  std::deque<Job> waiting, posted;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      for (Job& job : inbox_) waiting.push_back(std::move(job));
      inbox_.clear();
      if (waiting.empty() && posted.empty()) {
        if (stopping_) return;
        wake_.wait(lock, [&] { return stopping_ || !inbox_.empty(); });
        continue;
      }
      if (stopping_ || abort_->raised()) {
        Error reason = abort_->raised()
                           ? Error(abort_->code(), abort_->reason())
                           : Error(ncclInternalError,
                                   "the GPU engine stopped before the send");
        failAll(waiting, reason);
        failAll(posted, reason);
        continue;
      }
    }
    bool moved = postReady(waiting, posted);
    moved = completeFinished(posted) || moved;
    if (!moved) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

bool SendProxy::postReady(std::deque<Job>& waiting, std::deque<Job>& posted) {
  bool moved = false;
  while (!waiting.empty() && progress_.reached(waiting.front().mark)) {
    Job job = std::move(waiting.front());
    waiting.pop_front();
    try {
      job.onLink = job.link->send(job.slot, job.bytes);
      posted.push_back(std::move(job));
    } catch (...) {
      Error error = currentExceptionAsError();
      abort_->raise(error.code(), error.what());
      job.request->complete(error);
    }
    moved = true;
  }
  return moved;
}

bool SendProxy::completeFinished(std::deque<Job>& posted) {
  bool moved = false;
  for (auto it = posted.begin(); it != posted.end();) {
    std::optional<Error> failure;
    try {
      if (!it->onLink->done()) {
        ++it;
        continue;
      }
      pool_.release(it->slot, 0);
    } catch (...) {
      failure = currentExceptionAsError();
      abort_->raise(failure->code(), failure->what());
    }
    it->request->complete(failure);
    it = posted.erase(it);
    moved = true;
  }
  return moved;
}

// A failed job's slot is not handed out again: the link may still hold it.
void SendProxy::failAll(std::deque<Job>& jobs, const Error& error) {
  for (Job& job : jobs) job.request->complete(error);
  jobs.clear();
}

}  // namespace hetccl
