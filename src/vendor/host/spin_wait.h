// Polling with back-off for flags in shared memory. Ranks are often more
// than cores (4 ranks on 2 cores in CI), so a waiter spins briefly and then
// yields its core to the rank it is waiting for. Every pause checks the
// communicator's abort signal, the loss of a peer, and the wait's deadline.
#pragma once

#include <chrono>

#include "util/abort_signal.h"

namespace hetccl {

class SpinWait {
 public:
  // timeoutSeconds <= 0 waits for as long as it takes (NCCL's behaviour);
  // an abort still ends the wait.
  SpinWait(AbortSignal& abort, const AbortSignal& peerLoss,
           double timeoutSeconds, const char* what, int peer);
  // Called after each unsuccessful poll. Throws the abort's error, or the
  // peer loss (a wait that cannot end is what makes a loss matter), or
  // raises and throws a timeout naming what was awaited.
  void pause();

 private:
  [[noreturn]] void timedOut();

  AbortSignal& abort_;
  const AbortSignal& peerLoss_;
  double timeoutSeconds_;
  const char* what_;
  int peer_;
  unsigned polls_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace hetccl
