// Where the threads that post transfers hand them to a transport's progress
// thread (tcp, ucx): the progress thread alone touches sockets and UCX, so
// a post only queues the transfer here and wakes the thread, which takes
// everything queued on its next turn. Once the thread has ended, the inbox
// is closed: what was still queued, and every later post, fails with the
// reason. How the thread is woken is each thread's own.
#pragma once

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "util/error.h"

namespace hetccl {

// `Posted` holds the transfer's request as `request`, a shared pointer to
// a PostedRequest (null for messages of the thread's own, nobody waits for).
template <typename Posted>
class ProgressInbox {
 public:
  // Whether `posted` was queued; once the inbox is closed its request
  // fails instead.
  bool push(Posted&& posted) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closedWith_) {
      if (posted.request) posted.request->failWith(*closedWith_);
      return false;
    }
    queued_.push_back(std::move(posted));
    return true;
  }

  // Everything queued, oldest first; the inbox is left empty.
  std::vector<Posted> take() {
    std::vector<Posted> taken;
    std::lock_guard<std::mutex> lock(mutex_);
    taken.swap(queued_);
    return taken;
  }

  bool empty() {
    std::lock_guard<std::mutex> lock(mutex_);
    return queued_.empty();
  }

  // Fails what is queued and every later post with `reason`.
  void close(const Error& reason) {
    std::vector<Posted> left;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closedWith_ = reason;
      left.swap(queued_);
    }
    for (Posted& posted : left)
      if (posted.request) posted.request->failWith(reason);
  }

 private:
  std::mutex mutex_;
  std::vector<Posted> queued_;
  std::optional<Error> closedWith_;  // set once the thread has ended
};

}  // namespace hetccl
