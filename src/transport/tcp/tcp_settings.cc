#include "transport/tcp/tcp_settings.h"

#include <algorithm>

#include "transport/lane_placement.h"
#include "util/cpu_cores.h"

namespace hetccl {

// Each progress thread serves both directions of its sockets, so a link
// loaded both ways moves about half of what it moves one way on as many
// threads; more threads lift both where there are cores for them. On the
// H200 machine (16 cores, tcp over loopback, 256 MB), 8 threads and
// sockets moved 9.3-11.2 GB/s each way both ways at once where 4 moved
// 5.7-8.2, and 20-28 GB/s one way where 4 moved 12.5-18
// (bench/results/cross-host-2026-12-02.md). The link alone gains little
// from more than 8, but the staged GPU path, whose pieces (2 MiB) are cut
// into a part per thread, does: on 16-core H100 machines, 2 GPU ranks as
// pretend hosts moved 64-256 MB collectives 1.06-1.71x as fast on 12
// threads as on 8 (in 48 of 48 paired rounds, two calls), CPU ranks
// within their noise, while 4, 6, 10 and 16 did worse than 12
// (bench/results/tcp-threads-h100-2026-12-06.md). CPU ranks' 512 B-4 KiB
// collectives then took about 3 us (10-15%) longer than on 8, since small
// transfers were dealt to the lanes in turn and found each lane's thread
// asleep by its turn; every transfer now starts on its pair's home lane
// (TcpLink), whatever the number of lanes. The rank's own threads (the
// caller, the GPU engine's proxy, the memory helpers) keep 4 cores; on 2
// cores 8 threads moved no more than 4. A host's ranks share its cores
// (coresOfOneRank), so eight GPU ranks on a 64-core node take 4 each, not
// 12: their threads poll while transfers move.
int TcpSettings::threadsForCores(int cores) {
  constexpr int kCoresForTheRank = 4;
  constexpr int kMinAutoThreads = 4;
  constexpr int kMaxAutoThreads = 12;
  return std::clamp(cores - kCoresForTheRank, kMinAutoThreads, kMaxAutoThreads);
}

// A thread that sleeps while its transfers are in flight is woken for
// each next socket event, which in a large transfer comes every few tens
// of microseconds; on a virtual machine each wake-up is a trip through
// the hypervisor. On 16-core H100 machines, 2 ranks as pretend hosts over
// tcp, polling 1 ms with transfers in flight made CPU ranks' collectives
// 1.06-1.09x as fast as 50 us (medians of paired rounds, three calls),
// GPU ranks' 0.98-1.09x, and small messages no slower but GPU ranks'
// 64-512 B broadcast (bench/results/cross-host-h100-2026-12-05.md). On 2
// cores, where the ranks' threads outnumber the cores, it made 4 CPU
// ranks' 32 MB all-reduce and send/recv 2-16 % slower: hosts of fewer
// cores keep the short window.
int TcpSettings::busyPollForCores(int pollMicroseconds) {
  constexpr int kMinCores = 8;
  constexpr int kBusyPollMicroseconds = 1000;
  if (availableCores() < kMinCores) return pollMicroseconds;
  return std::max(pollMicroseconds, kBusyPollMicroseconds);
}

// The many-cores rule of every link (smallestPartForCores); below it 128
// KiB, since on 2 cores (4 lanes) 64 KiB against 128 KiB was 0.61-1.73x in
// busbw with no side ahead (bench/results/tcp-split-h100-2026-12-06.md).
size_t TcpSettings::splitForCores(int cores) {
  constexpr size_t kFewCoresSplitBytes = 128 * 1024;
  return smallestPartForCores(cores, kFewCoresSplitBytes);
}

// The bounds are tcp_params.def's.
TcpSettings TcpSettings::fromEnvironment() {
  TcpSettings s;
  s.threads = static_cast<int>(readInteger(kTcpThreads));
  s.socketsPerLink = static_cast<int>(readInteger(kTcpSockets));
  s.stripeBytes = readBytes(kTcpChunk);
  s.splitBytes = readSmallestPart(kTcpSplit);
  s.socketBufferBytes = static_cast<int>(readInteger(kTcpBuffer));
  s.pollMicroseconds = static_cast<int>(readInteger(kTcpPollUs));
  const int busyPoll = static_cast<int>(readInteger(kTcpBusyPollUs));
  s.busyPollMicroseconds = busyPoll < 0
                               ? busyPollForCores(s.pollMicroseconds)
                               : std::max(busyPoll, s.pollMicroseconds);
  return s;
}

TcpSettings TcpSettings::forHost(size_t hostRanks) const {
  TcpSettings s = *this;
  if (s.threads == 0) s.threads = threadsForCores(coresOfOneRank(hostRanks));
  if (s.socketsPerLink == 0) s.socketsPerLink = s.threads;
  if (s.splitBytes == 0)
    s.splitBytes = splitForCores(coresOfOneRank(hostRanks));
  return s;
}

}  // namespace hetccl
