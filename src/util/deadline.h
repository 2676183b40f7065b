// Bounded waits: a deadline, the abort flags that cut a wait short, and a
// poll that sleeps in slices, so that no wait on a socket can hang.
//
// Blocking calls poll in slices of at most kPollSliceMs so that they
// notice an abort promptly.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace hetccl {

// Longest single sleep of any blocking socket call, in milliseconds.
constexpr int kPollSliceMs = 100;

// A point in time after which a wait fails. "Never" waits until aborted.
class Deadline {
 public:
  // `seconds` from now; zero, negative or infinite means never.
  static Deadline after(double seconds);
  static Deadline never() { return Deadline(); }

  bool isNever() const { return never_; }
  bool expired() const;
  // The length this deadline was made with, for messages.
  double seconds() const { return seconds_; }
  // How long one poll may sleep: at most kPollSliceMs, never past the
  // deadline.
  int pollSliceMs() const;
  // Whichever of the two ends first.
  Deadline earliest(const Deadline& other) const;

 private:
  Deadline() = default;
  std::chrono::steady_clock::time_point end_{};
  double seconds_ = 0;
  bool never_ = true;
};

// The flags that can cut a wait short: the caller's abort flag and,
// optionally, the owning object's own. Either may be null. Converts
// implicitly from a single flag pointer.
class AbortFlags {
 public:
  AbortFlags(const std::atomic<bool>* flag = nullptr)  // NOLINT: implicit
      : first_(flag) {}
  AbortFlags(const std::atomic<bool>* first, const std::atomic<bool>* second)
      : first_(first), second_(second) {}
  bool raised() const {
    return (first_ && first_->load(std::memory_order_acquire)) ||
           (second_ && second_->load(std::memory_order_acquire));
  }

 private:
  const std::atomic<bool>* first_ = nullptr;
  const std::atomic<bool>* second_ = nullptr;
};

// Throws ncclSystemError "aborted while waiting for <what>" when an abort
// flag is raised, or "timed out after X s waiting for <what>" when the
// deadline passed. Call it before every sleep of a wait loop.
void checkWait(const Deadline& deadline, const AbortFlags& abort,
               const std::string& what);

// poll() for at most one slice of `deadline`, retrying on EINTR. Returns
// poll's count (0 when the slice ended). Throws ncclSystemError on failure.
int pollSlice(std::vector<pollfd>& fds, const Deadline& deadline);

}  // namespace hetccl
