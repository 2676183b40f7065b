#include "transport/tcp/tcp_settings.h"

#include <algorithm>

#include "util/cpu_cores.h"

namespace hetccl {

// Each progress thread serves both directions of its sockets, so a link
// loaded both ways moves about half of what it moves one way on as many
// threads; more threads lift both where there are cores for them. On the
// H200 machine (16 cores, tcp over loopback, 256 MB), 8 threads and
// sockets moved 9.3-11.2 GB/s each way both ways at once where 4 moved
// 5.7-8.2, and 20-28 GB/s one way where 4 moved 12.5-18
// (bench/results/cross-host-2026-12-02.md); on 2 cores 8 moved no more.
int TcpSettings::threadsForCores() {
  constexpr int kCoresPerThread = 2;
  constexpr int kMinAutoThreads = 4;
  constexpr int kMaxAutoThreads = 8;
  return std::clamp(availableCores() / kCoresPerThread, kMinAutoThreads,
                    kMaxAutoThreads);
}

// The bounds are tcp_params.def's.
TcpSettings TcpSettings::fromEnvironment() {
  TcpSettings s;
  s.threads = static_cast<int>(readInteger(kTcpThreads));
  if (s.threads == 0) s.threads = threadsForCores();
  s.socketsPerLink = static_cast<int>(readInteger(kTcpSockets));
  if (s.socketsPerLink == 0) s.socketsPerLink = s.threads;
  s.stripeBytes = readBytes(kTcpChunk);
  s.socketBufferBytes = static_cast<int>(readInteger(kTcpBuffer));
  s.pollMicroseconds = static_cast<int>(readInteger(kTcpPollUs));
  return s;
}

}  // namespace hetccl
