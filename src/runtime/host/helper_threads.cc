#include "runtime/host/helper_threads.h"

#include <pthread.h>

#include "util/error.h"

namespace hetccl {

HelperThreads::HelperThreads(int helpers) {
  for (int i = 0; i < helpers; ++i)
    threads_.emplace_back([this, part = i + 1] { serve(part); });
}

HelperThreads::~HelperThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void HelperThreads::run(int parts, const std::function<void(int)>& body) {
  HETCCL_CHECK_ARG(parts <= this->parts(),
                   "helper threads: %d parts for %d threads", parts,
                   this->parts());
  if (parts <= 1) return body(0);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    parts_ = parts;
    pending_ = parts - 1;
    error_ = nullptr;
    ++job_;
  }
  start_.notify_all();
  std::exception_ptr own;
  try {
    body(0);
  } catch (...) {
    own = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [this] { return pending_ == 0; });
  body_ = nullptr;
  if (own) std::rethrow_exception(own);
  if (error_) std::rethrow_exception(error_);
}

void HelperThreads::serve(int part) {
  pthread_setname_np(pthread_self(), "hetccl-helper");
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    start_.wait(lock, [&] { return stopping_ || job_ != seen; });
    if (stopping_) return;
    seen = job_;
    if (part >= parts_) continue;  // a job of fewer parts
    const std::function<void(int)>& body = *body_;
    lock.unlock();
    std::exception_ptr error;
    try {
      body(part);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (--pending_ == 0) finished_.notify_one();
  }
}

}  // namespace hetccl
