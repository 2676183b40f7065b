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

// A thread that sleeps while its transfers are in flight is woken for the
// next socket event, which between bursts of a large transfer comes every
// few tens of microseconds: on virtual machines each such wake-up is an
// exit to the hypervisor and back. On the H100 machine (16 cores, tcp
// over loopback, 3 alternating rounds) polling for 1 ms moved a 256 MB
// send/recv of CPU ranks at 12.1-13.5 GB/s each way against 10.7-11.8
// with 50 us, GPU ranks' 64 MB at 9.8-11.2 against 9.1-9.8
// (bench/results/cross-host-h100-2026-12-05.md). On 2 cores, where the
// ranks' threads outnumber the cores, polling longer made 4 CPU ranks'
// 8 KB all-reduce 1.1-1.7x slower, so hosts of fewer cores keep the
// short window.
int TcpSettings::busyPollForCores(int pollMicroseconds) {
  constexpr int kMinCores = 8;
  constexpr int kBusyPollMicroseconds = 1000;
  if (availableCores() < kMinCores) return pollMicroseconds;
  return std::max(pollMicroseconds, kBusyPollMicroseconds);
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
  const int busyPoll = static_cast<int>(readInteger(kTcpBusyPollUs));
  s.busyPollMicroseconds = busyPoll < 0
                               ? busyPollForCores(s.pollMicroseconds)
                               : std::max(busyPoll, s.pollMicroseconds);
  return s;
}

}  // namespace hetccl
