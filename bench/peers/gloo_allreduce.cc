// Gloo's ring all-reduce over the host sweep, for comparison with HetCCL.
// The program starts its own ranks (fork), connects them over Gloo's TCP
// transport on loopback with a file-store rendezvous in a temporary
// directory, e.g.:
//   build/bench/peer-gloo-allreduce -np 4 -b 1K -e 256M -f 2 --json g.jsonl
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "allreduce_sweep.h"
#include "kit/launcher.h"
#include "kit/temp_dir.h"
#include "sweep_options.h"

namespace hetccl::bench {
namespace {

class GlooCommunicator : public HostCommunicator {
 public:
  GlooCommunicator(int rank, int nranks, const std::string& storeDir,
                   std::chrono::milliseconds timeout)
      : context_(std::make_shared<gloo::rendezvous::Context>(rank, nranks)) {
    gloo::transport::tcp::attr loopback("127.0.0.1");
    auto device = gloo::transport::tcp::CreateDevice(loopback);
    gloo::rendezvous::FileStore store(storeDir);
    context_->setTimeout(timeout);
    context_->connectFullMesh(store, device);
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }

  void barrier() override {
    gloo::BarrierOptions options(context_);
    gloo::barrier(options);
  }

  // The entry point PyTorch's Gloo backend uses for a CPU all-reduce, with
  // the ring algorithm chosen explicitly.
  void allreduceSum(const float* send, float* recv, size_t count) override {
    gloo::AllreduceOptions options(context_);
    options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    options.setInput(const_cast<float*>(send), count);
    options.setOutput(recv, count);
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(
            &gloo::sum<float>));
    gloo::allreduce(options);
  }

  double maxOverRanks(double value) override {
    double result = value;
    gloo::AllreduceOptions options(context_);
    options.setOutput(&result, 1);
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(
            &gloo::max<double>));
    gloo::allreduce(options);
    return result;
  }

 private:
  std::shared_ptr<gloo::rendezvous::Context> context_;
};

// 0 when every rank succeeded; else what went wrong, on stderr, and the
// first failed rank's status (124 on timeout).
int exitStatus(const hetccl::kit::LaunchReport& report, int timeoutSeconds) {
  if (report.timedOut) {
    std::fprintf(stderr, "ranks still running after %ds: killed\n",
                 timeoutSeconds);
    return 124;
  }
  if (report.firstUnexpectedRank < 0) return 0;
  const hetccl::kit::RankExit& failed =
      report.ranks[report.firstUnexpectedRank];
  std::fprintf(stderr, "rank %d %s\n", report.firstUnexpectedRank,
               failed.describe().c_str());
  return failed.shellStatus();
}

}  // namespace
}  // namespace hetccl::bench

int main(int argc, char** argv) {
  using namespace hetccl::bench;
  SweepOptions options = parseSweepOptions(argc, argv, /*acceptNp=*/true);
  try {
    hetccl::kit::TempDir storeDir("hetccl-gloo-bench-");
    const auto timeout = std::chrono::seconds(options.timeoutSeconds);
    hetccl::kit::LaunchOptions launch;
    launch.nranks = options.nranks;
    launch.timeoutSeconds = options.timeoutSeconds;
    const hetccl::kit::LaunchReport report =
        hetccl::kit::launchRanks(launch, [&](int rank) {
          GlooCommunicator comm(rank, options.nranks, storeDir.path(), timeout);
          return runAllreduceSweep(comm, "gloo", options);
        });
    return exitStatus(report, options.timeoutSeconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer-gloo-allreduce: %s\n", e.what());
    return 1;
  }
}
