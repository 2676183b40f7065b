#include "util/spin_wait.h"

#include <sched.h>

#include <algorithm>

#include "util/error.h"

namespace hetccl {
namespace {

// Polls before the first yield. Few: a yield with nothing else to run
// returns at once, and with more ranks than cores it lets the awaited rank
// run.
constexpr unsigned kBusyPolls = 16;
constexpr unsigned kPollsPerClockRead = 64;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

SpinWait::SpinWait(const AbortSignal& abort, const PeerLiveness* liveness,
                   double timeoutSeconds, const char* what, int peer)
    : abort_(abort),
      liveness_(liveness),
      timeoutSeconds_(timeoutSeconds),
      what_(what),
      peer_(peer),
      start_(timeoutSeconds > 0 ? std::chrono::steady_clock::now()
                                : std::chrono::steady_clock::time_point()) {}

void SpinWait::checkPeer(int peer) {
  if (liveness_ == nullptr || !liveness_->lost(peer)) return;
  if (std::find(lostOnce_.begin(), lostOnce_.end(), peer) == lostOnce_.end()) {
    lostOnce_.push_back(peer);
    return;
  }
  liveness_->throwIfLost(peer);
}

void SpinWait::pause() {
  abort_.throwIfRaised();
  checkPeer(peer_);
  ++polls_;
  if (polls_ < kBusyPolls) {
    cpuRelax();
    return;
  }
  sched_yield();
  if (timeoutSeconds_ <= 0 || polls_ % kPollsPerClockRead != 0) return;
  auto elapsed = std::chrono::steady_clock::now() - start_;
  if (std::chrono::duration<double>(elapsed).count() > timeoutSeconds_)
    timedOut();
}

void SpinWait::timedOut() {
  std::string reason =
      peer_ >= 0 ? format(
                       "timed out after %g s waiting for rank %d (%s); set "
                       "HETCCL_TIMEOUT to wait longer",
                       timeoutSeconds_, peer_, what_)
                 : format("timed out after %g s waiting for %s",
                          timeoutSeconds_, what_);
  const_cast<AbortSignal&>(abort_).raise(ncclRemoteError, reason);
  abort_.throwIfRaised();
  throw Error(ncclRemoteError, reason);  // not reached: raised just above
}

}  // namespace hetccl
