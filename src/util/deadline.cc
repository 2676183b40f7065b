#include "util/deadline.h"

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "util/error.h"

namespace hetccl {

Deadline Deadline::after(double seconds) {
  Deadline d;
  d.seconds_ = seconds;
  // Beyond a few decades "never" is the honest reading, and it keeps the
  // time_point arithmetic far from overflow.
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) return d;
  d.never_ = false;
  d.end_ = std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(seconds));
  return d;
}

bool Deadline::expired() const {
  return !never_ && std::chrono::steady_clock::now() >= end_;
}

int Deadline::pollSliceMs() const {
  if (never_) return kPollSliceMs;
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(
                  end_ - std::chrono::steady_clock::now())
                  .count();
  if (left <= 0) return 0;
  return static_cast<int>(
      std::min<long long>(kPollSliceMs, (left + 999) / 1000));
}

Deadline Deadline::earliest(const Deadline& other) const {
  if (never_) return other;
  if (other.never_) return *this;
  return end_ <= other.end_ ? *this : other;
}

void checkWait(const Deadline& deadline, const AbortFlags& abort,
               const std::string& what) {
  if (abort.raised())
    fail(ncclSystemError, "aborted while waiting for %s", what.c_str());
  if (deadline.expired())
    fail(ncclSystemError, "timed out after %g s waiting for %s",
         deadline.seconds(), what.c_str());
}

int pollSlice(std::vector<pollfd>& fds, const Deadline& deadline) {
  int rc = ::poll(fds.data(), fds.size(), deadline.pollSliceMs());
  if (rc >= 0) return rc;
  if (errno != EINTR) failErrno("poll on %zu socket(s) failed", fds.size());
  for (auto& fd : fds) fd.revents = 0;
  return 0;
}

}  // namespace hetccl
