// tcp-loopback: how close a HetCCL tcp link comes to a plain TCP stream.
//
// Measures, in one run and over the address the transport itself would use
// (chooseLocalAddress(), so loopback traffic on a single host):
//   (a) plain-socket: one blocking TCP socket, a writer thread sending the
//       total in 4 MiB write() calls, a reader thread read()ing it;
//   (b) hetccl-tcp: a TcpLinkSet link between two ranks of this process,
//       moving the same total in 64 MiB transfers (all sends posted at once,
//       receives double-buffered).
// Prints both throughputs (GB = 10^9 bytes) and their ratio; the target is
// hetccl-tcp >= 0.8 x plain-socket.
//
//   build/bench/tcp-loopback [--total BYTES] [--json FILE]
//
// --json writes one JSON object per line:
//   {"impl":"plain-socket"|"hetccl-tcp","bytes":N,"GBps":X,"seconds":S}
// HETCCL_TCP_SOCKETS / HETCCL_TCP_CHUNK / HETCCL_TCP_BUFFER tune (b).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap_settings.h"
#include "op/call_signature.h"
#include "transport/tcp/tcp_link_set.h"
#include "util/error.h"
#include "util/net_interfaces.h"
#include "util/owned_fd.h"
#include "util/params.h"
#include "util/socket_address.h"

namespace hetccl {
namespace {

// Both ends' transfers belong to the same call.
constexpr CallSignature kBenchCall{};

using Clock = std::chrono::steady_clock;

constexpr size_t kPlainWriteBytes = size_t{4} << 20;
constexpr size_t kTransferBytes = size_t{64} << 20;
constexpr double kWaitSeconds = 120;

struct Options {
  size_t totalBytes = size_t{1} << 30;
  std::string jsonPath;
};

struct Result {
  const char* impl;
  size_t bytes;
  double seconds;
  double gbps() const { return bytes / seconds / 1e9; }
};

Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) fail(ncclInvalidArgument, "%s needs a value", argv[i]);
    std::string value = argv[++i];
    int64_t size = 0;
    if (flag == "--total" && parseSize(value, &size) && size > 0) {
      options.totalBytes = static_cast<size_t>(size);
    } else if (flag == "--json") {
      options.jsonPath = value;
    } else {
      fail(ncclInvalidArgument,
           "usage: tcp-loopback [--total BYTES] [--json FILE] (bad %s %s)",
           flag.c_str(), value.c_str());
    }
  }
  return options;
}

// Runs body(0) and body(1) on two threads; rethrows the first failure.
void runPair(const std::function<void(int)>& body) {
  std::exception_ptr errors[2];
  std::thread other([&] {
    try {
      body(1);
    } catch (...) {
      errors[1] = std::current_exception();
    }
  });
  try {
    body(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  other.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// ---------------------------------------------------------------------------
// (a) A plain blocking socket stream: the best one TCP connection does.

void writeFully(int fd, const uint8_t* data, size_t bytes) {
  while (bytes > 0) {
    ssize_t n = ::write(fd, data, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failErrno("plain socket write failed");
    data += n;
    bytes -= static_cast<size_t>(n);
  }
}

Result measurePlainSocket(const SocketAddress& local, size_t total) {
  OwnedFd listener(::socket(local.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid() ||
      ::bind(listener.get(), local.get(), local.length()) < 0 ||
      ::listen(listener.get(), 1) < 0)
    failErrno("plain socket: cannot listen on %s", local.toString().c_str());
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(listener.get(), reinterpret_cast<sockaddr*>(&bound), &length);
  SocketAddress address(reinterpret_cast<sockaddr*>(&bound), length);

  OwnedFd writer(::socket(local.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(writer.get(), address.get(), address.length()) < 0)
    failErrno("plain socket: cannot connect to %s", address.toString().c_str());
  OwnedFd reader(::accept(listener.get(), nullptr, nullptr));
  if (!reader.valid()) failErrno("plain socket: accept failed");

  std::vector<uint8_t> out(kPlainWriteBytes, 0x5A), in(kPlainWriteBytes, 0);
  auto start = Clock::now();
  runPair([&](int side) {
    size_t left = total;
    while (left > 0) {
      size_t chunk = left < kPlainWriteBytes ? left : kPlainWriteBytes;
      if (side == 0) {
        writeFully(writer.get(), out.data(), chunk);
        left -= chunk;
      } else {
        ssize_t n = ::read(reader.get(), in.data(), chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) failErrno("plain socket read failed");
        left -= static_cast<size_t>(n);
      }
    }
  });
  std::chrono::duration<double> elapsed = Clock::now() - start;
  return {"plain-socket", total, elapsed.count()};
}

// ---------------------------------------------------------------------------
// (b) A HetCCL tcp link between two in-process ranks.

// Two ranks meeting in shared memory.
class PairOob : public Oob {
 public:
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    int arrived = 0;
    uint64_t generation = 0;
    std::vector<uint8_t> filling, result;
  };

  PairOob(Shared& shared, int rank) : shared_(shared), rank_(rank) {}
  int rank() const override { return rank_; }
  int nranks() const override { return 2; }
  void barrier() override { allGather(nullptr, 0); }
  void allGather(void* data, size_t bytesPerRank) override {
    std::unique_lock<std::mutex> lock(shared_.mutex);
    if (shared_.arrived == 0) shared_.filling.assign(2 * bytesPerRank, 0);
    if (bytesPerRank > 0)
      std::memcpy(shared_.filling.data() + rank_ * bytesPerRank,
                  static_cast<uint8_t*>(data) + rank_ * bytesPerRank,
                  bytesPerRank);
    uint64_t generation = shared_.generation;
    if (++shared_.arrived == 2) {
      shared_.result.swap(shared_.filling);
      shared_.arrived = 0;
      ++shared_.generation;
      shared_.changed.notify_all();
    } else {
      shared_.changed.wait(lock,
                           [&] { return shared_.generation != generation; });
    }
    if (bytesPerRank > 0)
      std::memcpy(data, shared_.result.data(), 2 * bytesPerRank);
  }

 private:
  Shared& shared_;
  const int rank_;
};

void sendAll(Link& link, const std::vector<uint8_t>& buffer, size_t total) {
  std::vector<std::shared_ptr<TransferRequest>> sends;
  for (size_t done = 0; done < total; done += buffer.size()) {
    size_t bytes = std::min(buffer.size(), total - done);
    sends.push_back(link.send(buffer.data(), bytes, kBenchCall));
  }
  for (auto& s : sends) s->wait(AbortSignal(), kWaitSeconds);
}

// Keeps two receives in flight, each into its own buffer.
void receiveAll(Link& link, std::vector<uint8_t> (&buffers)[2], size_t total) {
  std::shared_ptr<TransferRequest> inFlight[2];
  size_t posted = 0;
  for (int turn = 0; posted < total || inFlight[turn % 2]; ++turn) {
    auto& slot = inFlight[turn % 2];
    if (slot) slot->wait(AbortSignal(), kWaitSeconds);
    slot.reset();
    if (posted < total) {
      size_t bytes = std::min(buffers[turn % 2].size(), total - posted);
      slot = link.recv(buffers[turn % 2].data(), bytes, kBenchCall);
      posted += bytes;
    }
  }
}

Result measureTcpLink(size_t total, TcpSettings* settings) {
  PairOob::Shared shared;
  PairOob oobs[2] = {PairOob(shared, 0), PairOob(shared, 1)};
  std::unique_ptr<TcpLinkSet> transports[2];
  runPair([&](int r) {
    transports[r] = std::make_unique<TcpLinkSet>(
        oobs[r], std::vector<int>{1 - r},
        TcpSettings::fromEnvironment().forHost(1),
        BootstrapSettings::fromEnvironment().timeoutSeconds,
        std::make_shared<AbortSignal>());
  });
  *settings = transports[0]->settings();
  std::vector<uint8_t> out(kTransferBytes, 0x5A);
  std::vector<uint8_t> in[2] = {std::vector<uint8_t>(kTransferBytes, 0),
                                std::vector<uint8_t>(kTransferBytes, 0)};
  // Warm-up: first-touch page faults and TCP slow start stay out of the
  // timing.
  runPair([&](int r) {
    if (r == 0) sendAll(*transports[0]->link(1), out, kTransferBytes);
    if (r == 1) receiveAll(*transports[1]->link(0), in, kTransferBytes);
  });
  Clock::time_point start;
  runPair([&](int r) {
    oobs[r].barrier();
    if (r == 1) start = Clock::now();
    oobs[r].barrier();
    if (r == 0) sendAll(*transports[0]->link(1), out, total);
    if (r == 1) receiveAll(*transports[1]->link(0), in, total);
  });
  std::chrono::duration<double> elapsed = Clock::now() - start;
  if (transports[1]->link(0)->bytesReceived() != total + kTransferBytes)
    fail(ncclInternalError, "tcp link received %zu bytes, expected %zu",
         transports[1]->link(0)->bytesReceived(), total + kTransferBytes);
  return {"hetccl-tcp", total, elapsed.count()};
}

void writeJson(const std::string& path, const std::vector<Result>& results) {
  std::ofstream json(path, std::ios::trunc);
  if (!json) fail(ncclSystemError, "cannot write %s", path.c_str());
  for (const auto& r : results)
    json << format(
        "{\"impl\":\"%s\",\"bytes\":%zu,\"GBps\":%.4f,\"seconds\":%.6f}\n",
        r.impl, r.bytes, r.gbps(), r.seconds);
}

int run(int argc, char** argv) {
  Options options = parseOptions(argc, argv);
  SocketAddress local = chooseLocalAddress();
  // A short plain run first warms the same paths the tcp link warms.
  measurePlainSocket(local, kTransferBytes);
  Result plain = measurePlainSocket(local, options.totalBytes);
  TcpSettings settings;
  Result tcp = measureTcpLink(options.totalBytes, &settings);
  std::printf("address %s, %zu bytes each\n", local.hostString().c_str(),
              options.totalBytes);
  std::printf("plain-socket: %8.3f s %7.3f GB/s (1 socket, %zu-byte writes)\n",
              plain.seconds, plain.gbps(), kPlainWriteBytes);
  std::printf(
      "hetccl-tcp:   %8.3f s %7.3f GB/s (%d socket(s), %zu-byte stripes, "
      "%zu-byte transfers)\n",
      tcp.seconds, tcp.gbps(), settings.socketsPerLink, settings.stripeBytes,
      kTransferBytes);
  double ratio = tcp.gbps() / plain.gbps();
  std::printf("ratio hetccl-tcp / plain-socket: %.3f (target >= 0.8)\n", ratio);
  if (!options.jsonPath.empty()) writeJson(options.jsonPath, {plain, tcp});
  return 0;
}

}  // namespace
}  // namespace hetccl

int main(int argc, char** argv) {
  try {
    return hetccl::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcp-loopback: %s\n", e.what());
    return 1;
  }
}
