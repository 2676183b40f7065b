// net-plugin-bandwidth: an NCCL network plugin alone between two processes,
// one direction: rank 0 isends, rank 1 irecvs, `--window` messages in
// flight, about `--bytes` per size; the yardstick of a HetCCL link over the
// same plugin (link-bandwidth --transport net, bench/net_plugin_compare.py).
// The plugin is loaded as the net transport loads it (HETCCL_NET_PLUGIN,
// through libhetccl-net.so's table, NetLibrary), and the two ranks connect
// as its links do (net_connect.h); from then on only the plugin works: each
// rank registers its buffer once and posts isend/irecv on one comm, testing
// what is in flight, with no header, no cutting beyond `--message`, no
// thread between the loop and the plugin; a turn that moved nothing
// yields the core.
//
//   build/bench/net-plugin-bandwidth [--plugin PATH|NAME] [--sizes 1M,64M]
//       [--bytes 2G] [--window 4] [--message SIZE] [--json FILE]
//
// A transfer of SIZE bytes is one message, or messages of `--message`
// bytes where that (or the device's maxP2pBytes) is smaller. `--window`
// counts messages (at most the ABI's 32 per comm). Prints a line per size;
// --json writes one object per size:
//   {"tool":"net-plugin","plugin":NAME,"bytes":SIZE,"message":M,
//    "window":W,"transfers":N,"seconds":S,"GBps":X}   (GB = 10^9 bytes).
// The plugin's own variables apply (FI_PROVIDER, NCCL_* of the plugin).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "forked_ranks.h"
#include "transport/net/net_connect.h"
#include "transport/net/net_handles.h"
#include "transport/net/net_library.h"
#include "util/abort_signal.h"
#include "util/comma_list.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr const char* kTool = "net-plugin-bandwidth";
constexpr double kWaitSeconds = 120;
constexpr double kConnectSeconds = 60;

struct Options {
  std::vector<size_t> sizes = {size_t{1} << 20, size_t{64} << 20};
  size_t bytesPerSize = size_t{2} << 30;
  size_t window = 4;
  size_t message = 0;  // 0: a transfer is one message
  std::string jsonPath;
};

Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) fail(ncclInvalidArgument, "%s needs a value", argv[i]);
    const std::string value = argv[++i];
    if (flag == "--plugin") {
      // Read by every rank's NetLibrary after the fork.
      ::setenv("HETCCL_NET_PLUGIN", value.c_str(), 1);
    } else if (flag == "--sizes") {
      options.sizes.clear();
      for (const std::string& size : splitCommaList(value))
        options.sizes.push_back(bench::sizeValue(kTool, size));
    } else if (flag == "--bytes") {
      options.bytesPerSize = bench::sizeValue(kTool, value);
    } else if (flag == "--window") {
      options.window = bench::sizeValue(kTool, value);
      if (options.window > HETCCL_NET_MODULE_MAX_REQUESTS)
        fail(ncclInvalidArgument,
             "--window %zu: a comm takes at most %d requests in flight",
             options.window, HETCCL_NET_MODULE_MAX_REQUESTS);
    } else if (flag == "--message") {
      options.message = bench::sizeValue(kTool, value);
    } else if (flag == "--json") {
      options.jsonPath = value;
    } else {
      fail(ncclInvalidArgument,
           "usage: %s [--plugin PATH|NAME] [--sizes LIST] [--bytes SIZE] "
           "[--window N] [--message SIZE] [--json FILE] (unknown %s)",
           kTool, flag.c_str());
    }
  }
  return options;
}

// One rank's end of the connection: its comm, its registered buffer.
class Endpoint {
 public:
  Endpoint(const NetContext& context, void* comm, bool sending,
           size_t bufferBytes)
      : context_(context),
        table_(context.library().table()),
        comm_(comm),
        sending_(sending),
        buffer_(bufferBytes, 0x5A),
        registration_(context, comm, buffer_.data(), buffer_.size()) {}

  // Moves `count` transfers of `size` bytes, in messages of `message`
  // bytes, `window` messages in flight; the seconds from the first post to
  // the last completion.
  double move(size_t size, size_t message, size_t count, size_t window) {
    const size_t perTransfer = (size + message - 1) / message;
    const size_t total = perTransfer * count;
    struct InFlight {
      void* request;
      size_t bytes;
    };
    std::deque<InFlight> inFlight;
    size_t posted = 0;
    const auto start = std::chrono::steady_clock::now();
    auto lastMove = start;
    while (posted < total || !inFlight.empty()) {
      bool moved = false;
      while (posted < total && inFlight.size() < window) {
        const size_t offset = (posted % perTransfer) * message;
        const size_t bytes = std::min(message, size - offset);
        void* request = post(buffer_.data() + offset, bytes);
        if (request == nullptr) break;  // the plugin said "later"
        inFlight.push_back({request, bytes});
        ++posted;
        moved = true;
      }
      for (auto it = inFlight.begin(); it != inFlight.end();) {
        int done = 0;
        size_t bytes = 0;
        context_.library().check(
            table_.test(context_.get(), it->request, &done, &bytes), "test");
        if (!done) {
          ++it;
          continue;
        }
        if (!sending_ && bytes != it->bytes)
          fail(ncclSystemError, "%zu bytes arrived for a %zu-byte message",
               bytes, it->bytes);
        it = inFlight.erase(it);
        moved = true;
      }
      const auto now = std::chrono::steady_clock::now();
      if (moved) lastMove = now;
      // A turn that moved nothing gives the core away, as a proxy thread
      // driving a plugin does (the net transport's does the same).
      if (!moved) std::this_thread::yield();
      if (std::chrono::duration<double>(now - lastMove).count() > kWaitSeconds)
        fail(ncclSystemError, "nothing moved for %.0f s", kWaitSeconds);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

 private:
  void* post(uint8_t* data, size_t bytes) {
    void* request = nullptr;
    const int result = sending_
                           ? table_.isend(context_.get(), comm_, data, bytes, 0,
                                          registration_.handle(), &request)
                           : table_.irecv(context_.get(), comm_, data, bytes, 0,
                                          registration_.handle(), &request);
    context_.library().check(result, sending_ ? "isend" : "irecv");
    return request;
  }

  const NetContext& context_;
  const hetcclNetModuleTable& table_;
  void* const comm_;
  const bool sending_;
  std::vector<uint8_t> buffer_;
  NetRegistration registration_;
};

void report(const NetLibrary& library, const Options& options, size_t size,
            size_t message, size_t count, double seconds, std::ofstream& json) {
  const double gbps = static_cast<double>(size) * count / seconds / 1e9;
  std::printf(
      "net-plugin %-14s %10zu B x %5zu (messages of %zu B, %zu in "
      "flight): %8.3f s  %7.3f GB/s\n",
      library.name().c_str(), size, count, message, options.window, seconds,
      gbps);
  std::fflush(stdout);
  if (!json.is_open()) return;
  json << "{\"tool\":\"net-plugin\",\"plugin\":\"" << library.name()
       << "\",\"abi\":" << library.abiVersion() << ",\"bytes\":" << size
       << ",\"message\":" << message << ",\"window\":" << options.window
       << ",\"transfers\":" << count << ",\"seconds\":" << seconds
       << ",\"GBps\":" << gbps << "}\n";
}

void runRank(Oob& oob, const Options& options) {
  const int rank = oob.rank();
  const int peer = 1 - rank;
  const NetLibrary& library = netLibrary();
  const hetcclNetDeviceInfo& device = library.devices().at(0);
  NetContext context(library, /*commId=*/1);
  // Each rank listens; the handles go round; each connects to the other.
  void* listenComm = nullptr;
  std::vector<NetListenHandle> handles(2);
  library.check(library.table().listen(context.get(), 0, handles[rank].data(),
                                       &listenComm),
                "listen");
  NetComm listen(context, NetComm::Kind::kListen, listenComm);
  oob.allGather(handles.data(), sizeof(NetListenHandle));
  NetConnectPlan plan;
  plan.rank = rank;
  plan.peers[peer] = handles[peer];
  plan.timeoutSeconds = kConnectSeconds;
  AbortSignal never;
  const std::atomic<bool> notStopped{false};
  std::map<int, NetPeerComms> comms =
      connectNetPeers(context, listen, plan, never, notStopped);
  NetPeerComms& mine = comms.at(peer);
  const bool sending = rank == 0;
  size_t largest = 0;
  for (size_t size : options.sizes) largest = std::max(largest, size);
  Endpoint endpoint(context, sending ? mine.send.get() : mine.receive.get(),
                    sending, largest);
  std::ofstream json;
  if (rank == 0 && !options.jsonPath.empty()) json.open(options.jsonPath);
  for (size_t size : options.sizes) {
    size_t message = options.message > 0 ? options.message : size;
    message = std::min({message, size, device.maxP2pBytes});
    const size_t count = std::max<size_t>(8, options.bytesPerSize / size);
    // A warm-up transfer (first-touch, the plugin's own set-up).
    endpoint.move(size, message, 1, options.window);
    oob.barrier();
    double seconds = endpoint.move(size, message, count, options.window);
    seconds = bench::slowestOf(oob, seconds);
    if (rank == 0)
      report(library, options, size, message, count, seconds, json);
  }
  oob.barrier();  // neither closes its comm while the other still tests
}

}  // namespace
}  // namespace hetccl

int main(int argc, char** argv) {
  try {
    const hetccl::Options options = hetccl::parseOptions(argc, argv);
    return hetccl::bench::runForkedRanks(
        hetccl::kTool, 2,
        [&](hetccl::bench::RelayOob& oob) { hetccl::runRank(oob, options); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", hetccl::kTool, e.what());
    return 2;
  }
}
