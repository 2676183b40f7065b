// link-bandwidth: one cross-domain link of a registered transport between
// two processes, in one direction, the way ucx_perftest's tag_bw measures
// UCX itself: rank 0 sends, rank 1 receives, `--window` transfers in
// flight, about `--bytes` per size. With `--two-way` both ranks send and
// receive at once, `--window` transfers in flight each way, as a 2-rank
// exchange loads the link (the yardstick of cross-host collectives: their
// busbw is a rate each way); it reports the rate each way. With
// `--ranks N` (even) N processes form N/2 such links at once, rank r with
// rank (r + N/2) % N: the rail pairs of 2 domains of N/2 ranks on 2 hosts,
// which load one machine's loopback (or a host's NIC) as an N-rank
// collective between those hosts does. Every figure is the slowest rank's.
// With `--pingpong N` it measures latency instead: N round trips per size,
// each rank sending once it has received, as ucx_perftest's tag_lat does.
// The processes are forked before any touches a transport (UCX must not
// be initialised before a fork) and meet through the parent, which relays
// their out-of-band exchanges.
//
//   build/bench/link-bandwidth --transport tcp|ucx|shm|net [--sizes 4M,64M]
//       [--bytes 2G] [--window 4] [--two-way] [--ranks N] [--pingpong N]
//       [--memory host|cuda] [--json FILE]
//
// With --memory cuda both ranks' buffers are on GPU 0, handed to the link
// as they are (Link::sendGpu; a ucx link of a UCX built with CUDA), through
// HetCCL's CUDA module.
//
// Prints a line per size; --json writes one object per size:
//   {"transport":T,"bytes":SIZE,"transfers":N,"seconds":S,"GBps":X}
// ("twoWay":true with --two-way: N transfers and X GB/s each way;
// "ranks":N with --ranks: X per link)
// (GB = 10^9 bytes), or with --pingpong
//   {"transport":T,"bytes":SIZE,"roundTrips":N,"seconds":S,"oneWayUs":X}.
// The transport's own variables apply (HETCCL_TCP_*, UCX_TLS,
// UCX_NET_DEVICES, ...).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap_settings.h"
#include "forked_ranks.h"
#include "op/call_signature.h"
#include "runtime/device/device_module_loader.h"
#include "runtime/device/device_resources.h"
#include "transport/transport_registry.h"
#include "util/comma_list.h"
#include "util/error.h"
#include "util/params.h"

namespace hetccl {
namespace {

using bench::sizeValue;
using bench::slowestOf;

// Both ends' transfers belong to the same call.
constexpr CallSignature kBenchCall{};

constexpr double kWaitSeconds = 120;

struct Options {
  std::string transport = "tcp";
  std::vector<size_t> sizes = {size_t{4} << 20, size_t{16} << 20,
                               size_t{64} << 20, size_t{256} << 20};
  size_t bytesPerSize = size_t{2} << 30;
  size_t window = 4;
  size_t roundTrips = 0;   // 0: bandwidth, else latency
  int ranks = 2;           // N/2 links, rank r to rank (r + N/2) % N
  bool twoWay = false;     // both ranks send and receive at once
  bool gpuMemory = false;  // --memory cuda
  std::string jsonPath;
};

Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--two-way") {
      options.twoWay = true;
      continue;
    }
    if (i + 1 >= argc)
      fail(ncclInvalidArgument, "link-bandwidth: %s needs a value", argv[i]);
    const std::string value = argv[++i];
    if (flag == "--transport") {
      options.transport = value;
    } else if (flag == "--sizes") {
      options.sizes.clear();
      for (const std::string& size : splitCommaList(value))
        options.sizes.push_back(sizeValue("link-bandwidth", size));
    } else if (flag == "--bytes") {
      options.bytesPerSize = sizeValue("link-bandwidth", value);
    } else if (flag == "--window") {
      options.window = sizeValue("link-bandwidth", value);
    } else if (flag == "--ranks") {
      options.ranks = static_cast<int>(sizeValue("link-bandwidth", value));
      if (options.ranks % 2 != 0 || options.ranks > 256)
        fail(ncclInvalidArgument,
             "link-bandwidth: --ranks must be even and at most 256, not %s",
             value.c_str());
    } else if (flag == "--pingpong") {
      options.roundTrips = sizeValue("link-bandwidth", value);
    } else if (flag == "--json") {
      options.jsonPath = value;
    } else if (flag == "--memory" && (value == "host" || value == "cuda")) {
      options.gpuMemory = value == "cuda";
    } else {
      fail(
          ncclInvalidArgument,
          "usage: link-bandwidth --transport NAME [--sizes LIST] [--bytes "
          "SIZE] [--window N] [--two-way] [--ranks N] [--pingpong N] [--memory "
          "host|cuda] [--json FILE] (unknown %s)",
          flag.c_str());
    }
  }
  return options;
}

const Transport& transportNamed(const std::string& name) {
  for (const Transport* transport : registeredTransports())
    if (name == transport->name()) return *transport;
  fail(ncclInvalidArgument, "link-bandwidth: no transport '%s' (have %s)",
       name.c_str(), registeredTransportNames().c_str());
}

// The buffer every transfer of a rank uses (only bandwidth counts): host
// memory, or GPU memory handed to the link as it is.
class TransferBuffer {
 public:
  TransferBuffer(size_t bytes, bool gpu) {
    if (!gpu) {
      host_.assign(bytes, 0x5A);
      return;
    }
    const DeviceModule& module = deviceModule(RuntimeKind::Cuda);
    module.check(module.api().setDevice(0), "selecting GPU 0");
    device_ = std::make_unique<DeviceMemory>(module, bytes);
  }

  std::shared_ptr<TransferRequest> post(Link& link, bool sending, size_t size) {
    if (!device_)
      return sending ? link.send(host_.data(), size, kBenchCall)
                     : link.recv(host_.data(), size, kBenchCall);
    return sending
               ? link.sendGpu(kCudaMemory, device_->data(), size, kBenchCall)
               : link.recvGpu(kCudaMemory, device_->data(), size, kBenchCall);
  }

 private:
  std::vector<uint8_t> host_;
  std::unique_ptr<DeviceMemory> device_;
};

// Moves `count` transfers of `size` bytes, `window` in flight; returns the
// seconds from the first post to the last completion.
double moveTransfers(Link& link, bool sending, size_t size, size_t count,
                     size_t window, TransferBuffer& buffer) {
  AbortSignal never;
  std::deque<std::shared_ptr<TransferRequest>> inFlight;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < count; ++i) {
    if (inFlight.size() == window) {
      inFlight.front()->wait(never, kWaitSeconds);
      inFlight.pop_front();
    }
    inFlight.push_back(buffer.post(link, sending, size));
  }
  while (!inFlight.empty()) {
    inFlight.front()->wait(never, kWaitSeconds);
    inFlight.pop_front();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// `count` transfers of `size` bytes each way at once, `window` in flight
// each way, sends from `out` and receives into `in`; returns the seconds
// from the first post to the last completion.
double moveBothWays(Link& link, size_t size, size_t count, size_t window,
                    TransferBuffer& out, TransferBuffer& in) {
  AbortSignal never;
  std::deque<std::shared_ptr<TransferRequest>> sends, receives;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < count; ++i) {
    for (auto* inFlight : {&sends, &receives})
      if (inFlight->size() == window) {
        inFlight->front()->wait(never, kWaitSeconds);
        inFlight->pop_front();
      }
    receives.push_back(in.post(link, false, size));
    sends.push_back(out.post(link, true, size));
  }
  for (auto* inFlight : {&sends, &receives})
    while (!inFlight->empty()) {
      inFlight->front()->wait(never, kWaitSeconds);
      inFlight->pop_front();
    }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// `roundTrips` times: the first rank of the link sends and then receives,
// the other receives and then sends; returns the seconds of them all.
double pingPong(Link& link, bool first, size_t size, size_t roundTrips,
                TransferBuffer& buffer) {
  AbortSignal never;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < roundTrips; ++i) {
    for (int turn = 0; turn < 2; ++turn) {
      const bool sending = (turn == 0) == first;
      buffer.post(link, sending, size)->wait(never, kWaitSeconds);
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

const char* memoryName(const Options& options) {
  return options.gpuMemory ? "cuda" : "host";
}

void reportBandwidth(const Options& options, size_t size, size_t count,
                     double seconds, std::ofstream& json) {
  const double gbps = static_cast<double>(size) * count / seconds / 1e9;
  std::printf("%-4s %-4s %10zu B x %5zu: %8.3f s  %7.3f GB/s%s",
              options.transport.c_str(), memoryName(options), size, count,
              seconds, gbps, options.twoWay ? " each way" : "");
  if (options.ranks != 2)
    std::printf(" per link, %d links at once", options.ranks / 2);
  std::printf("\n");
  if (!json.is_open()) return;
  json << "{\"transport\":\"" << options.transport << "\",\"memory\":\""
       << memoryName(options) << "\",\"bytes\":" << size
       << ",\"transfers\":" << count << ",\"seconds\":" << seconds
       << ",\"GBps\":" << gbps;
  if (options.twoWay) json << ",\"twoWay\":true";
  if (options.ranks != 2) json << ",\"ranks\":" << options.ranks;
  json << "}\n";
}

void reportLatency(const Options& options, size_t size, double seconds,
                   std::ofstream& json) {
  const double oneWayUs =
      seconds / (2.0 * static_cast<double>(options.roundTrips)) * 1e6;
  std::printf("%-4s %-4s %10zu B x %5zu round trips: %8.3f us one way\n",
              options.transport.c_str(), memoryName(options), size,
              options.roundTrips, oneWayUs);
  if (json.is_open())
    json << "{\"transport\":\"" << options.transport << "\",\"memory\":\""
         << memoryName(options) << "\",\"bytes\":" << size
         << ",\"roundTrips\":" << options.roundTrips
         << ",\"seconds\":" << seconds << ",\"oneWayUs\":" << oneWayUs << "}\n";
}

void runRank(Oob& oob, const Options& options) {
  const int rank = oob.rank();
  // The first half of the ranks sends one way, and sends first in a
  // ping-pong.
  const bool first = rank < options.ranks / 2;
  const int peer = (rank + options.ranks / 2) % options.ranks;
  const TransportSettings settings = TransportSettings::fromEnvironment();
  auto set = transportNamed(options.transport)
                 .connect({oob,
                           settings,
                           BootstrapSettings::fromEnvironment().timeoutSeconds,
                           {peer},
                           std::make_shared<AbortSignal>(),
                           nullptr});
  auto link = set->link(peer);
  size_t largest = 0;
  for (size_t size : options.sizes) largest = std::max(largest, size);
  TransferBuffer buffer(largest, options.gpuMemory);
  // A two-way run's receives land apart from its sends.
  std::unique_ptr<TransferBuffer> incoming;
  if (options.twoWay)
    incoming = std::make_unique<TransferBuffer>(largest, options.gpuMemory);
  std::ofstream json;
  if (rank == 0 && !options.jsonPath.empty()) json.open(options.jsonPath);
  for (size_t size : options.sizes) {
    const size_t count = std::max<size_t>(8, options.bytesPerSize / size);
    // A warm-up transfer (connection set-up, first-touch of the buffer).
    moveTransfers(*link, first, size, 1, 1, buffer);
    oob.barrier();
    double seconds = 0;
    if (options.roundTrips > 0)
      seconds = pingPong(*link, first, size, options.roundTrips, buffer);
    else if (options.twoWay)
      seconds =
          moveBothWays(*link, size, count, options.window, buffer, *incoming);
    else
      seconds =
          moveTransfers(*link, first, size, count, options.window, buffer);
    seconds = slowestOf(oob, seconds);
    if (rank != 0) continue;
    if (options.roundTrips > 0)
      reportLatency(options, size, seconds, json);
    else
      reportBandwidth(options, size, count, seconds, json);
    std::fflush(stdout);
  }
}

int runRanks(const Options& options) {
  return bench::runForkedRanks(
      "link-bandwidth", options.ranks,
      [&](bench::RelayOob& oob) { runRank(oob, options); });
}

}  // namespace
}  // namespace hetccl

int main(int argc, char** argv) {
  try {
    return hetccl::runRanks(hetccl::parseOptions(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "link-bandwidth: %s\n", e.what());
    return 2;
  }
}
