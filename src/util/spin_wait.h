// Polling with back-off for flags in shared memory. Ranks are often more
// than cores (4 ranks on 2 cores in CI), so a waiter spins briefly and then
// yields its core to the rank it is waiting for. Every pause checks the
// communicator's abort signal, whether the awaited peer is still alive, and
// the wait's deadline.
#pragma once

#include <chrono>
#include <vector>

#include "util/abort_signal.h"
#include "util/peer_liveness.h"

namespace hetccl {

class SpinWait {
 public:
  // `peer` is the rank waited for (-1: none in particular); `liveness`
  // may be null. timeoutSeconds <= 0 waits for as long as it takes
  // (NCCL's behaviour); an abort still ends the wait.
  SpinWait(const AbortSignal& abort, const PeerLiveness* liveness,
           double timeoutSeconds, const char* what, int peer);
  // Called after each unsuccessful poll. Throws the abort's error, the
  // loss of the awaited peer, or a timeout naming what was awaited (which
  // also raises the abort: a collective cut off midway leaves the ranks
  // out of step).
  void pause();
  // Also fail if `peer` is lost (for waits on several peers at once).
  void checkPeer(int peer);

 private:
  [[noreturn]] void timedOut();

  const AbortSignal& abort_;
  const PeerLiveness* liveness_;
  double timeoutSeconds_;
  const char* what_;
  int peer_;
  // Peers found lost once. A peer may write what is awaited and exit
  // between a poll and the question whether it lives, so a loss fails the
  // wait only when seen again, after one more poll: by then everything the
  // peer wrote before exiting is visible.
  std::vector<int> lostOnce_;
  unsigned polls_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace hetccl
