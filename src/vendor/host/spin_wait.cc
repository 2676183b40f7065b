#include "vendor/host/spin_wait.h"

#include <sched.h>

#include "util/error.h"

namespace hetccl {
namespace {

constexpr unsigned kBusyPolls = 128;
constexpr unsigned kPollsPerClockRead = 256;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

SpinWait::SpinWait(AbortSignal& abort, const AbortSignal& peerLoss,
                   double timeoutSeconds, const char* what, int peer)
    : abort_(abort),
      peerLoss_(peerLoss),
      timeoutSeconds_(timeoutSeconds),
      what_(what),
      peer_(peer) {}

void SpinWait::pause() {
  abort_.throwIfRaised();
  peerLoss_.throwIfRaised();
  ++polls_;
  if (polls_ < kBusyPolls) {
    cpuRelax();
    return;
  }
  sched_yield();
  if (timeoutSeconds_ <= 0 || polls_ % kPollsPerClockRead != 0) return;
  auto now = std::chrono::steady_clock::now();
  if (polls_ == kPollsPerClockRead) start_ = now;
  if (std::chrono::duration<double>(now - start_).count() > timeoutSeconds_)
    timedOut();
}

void SpinWait::timedOut() {
  std::string reason =
      peer_ >= 0
          ? format("timed out after %g s waiting for rank %d (%s); set "
                   "HETCCL_TIMEOUT to wait longer",
                   timeoutSeconds_, peer_, what_)
          : format("timed out after %g s waiting for %s", timeoutSeconds_,
                   what_);
  abort_.raise(ncclRemoteError, reason);
  abort_.throwIfRaised();
}

}  // namespace hetccl
