// Tunables of the tcp transport, read from its parameters (tcp_params.def)
// when a communicator is created. Rank 0's geometry (sockets per link,
// progress threads, stripe size) is the one every rank uses: the receiver
// computes where each stripe belongs from it, so both ends of a link must
// agree.
#pragma once

#include <cstddef>

#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "transport/tcp/tcp_params.def"
#define HETCCL_PARAMS_LIST tcpParams
#include "util/declare_params.inc"

struct TcpSettings {
  // HETCCL_TCP_SOCKETS: connections per peer pair (1..16; 0: as many as
  // threads, which forHost() settles).
  int socketsPerLink = 4;
  // HETCCL_TCP_THREADS: progress threads (1..16; 0: threadsForCores() of
  // one rank's share of the host, which forHost() settles); a link's
  // sockets are shared out among min(threads, sockets) of them, its lanes.
  int threads = 4;
  // HETCCL_TCP_CHUNK: bytes per stripe (4 KiB .. 1 GiB).
  size_t stripeBytes = 512 * 1024;
  // HETCCL_TCP_SPLIT: the smallest part a transfer is cut into across the
  // lanes (4 KiB .. 1 GiB; 0: splitForCores(), which forHost() settles;
  // TcpLink).
  size_t splitBytes = 128 * 1024;
  // HETCCL_TCP_BUFFER: SO_SNDBUF/SO_RCVBUF request; 0 keeps the kernel's
  // autotuning.
  int socketBufferBytes = 4 * 1024 * 1024;
  // HETCCL_TCP_POLL_US: how long a progress thread polls after activity
  // before it sleeps in epoll_wait.
  int pollMicroseconds = 50;
  // HETCCL_TCP_BUSY_POLL_US: the same while the thread has transfers in
  // flight (at least pollMicroseconds; -1 in the environment:
  // busyPollForCores()).
  int busyPollMicroseconds = 50;

  // Throws ncclInvalidArgument for the first bad value. Threads, sockets
  // and the smallest part left to the default stay 0 until forHost().
  static TcpSettings fromEnvironment();
  // These settings with the defaults of threads, sockets and the smallest
  // part settled for a rank among `hostRanks` ranks of its host.
  TcpSettings forHost(size_t hostRanks) const;
  // For a process that may run on `cores` cores: what the rank's own
  // threads leave of them, 4 to 12.
  static int threadsForCores(int cores);
  // 1000 us where this process may run on 8 cores or more, else
  // `pollMicroseconds`.
  static int busyPollForCores(int pollMicroseconds);
  // For a rank that may run on `cores` cores: 64 KiB from 8 cores, else
  // 128 KiB.
  static size_t splitForCores(int cores);
};

constexpr int kMaxTcpSocketsPerLink = 16;
constexpr int kMaxTcpThreads = 16;
constexpr size_t kMinTcpStripeBytes = 4 * 1024;
constexpr size_t kMaxTcpStripeBytes = size_t{1} << 30;

}  // namespace hetccl
