// hetccl-perf: bandwidth and correctness benchmark for HetCCL with
// nccl-tests semantics. Uses only the public API (nccl.h, hetccl.h).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "hetccl.h"
#include "perf/benchmark.h"
#include "perf/communicator.h"
#include "perf/control.h"
#include "perf/device.h"
#include "perf/local_ranks.h"
#include "perf/options.h"
#include "perf/perf_error.h"
#include "perf/rank_env.h"
#include "perf/report.h"
#include "perf/watchdog.h"

namespace hetccl {
namespace perf {
namespace {

void copyText(char* dst, size_t capacity, const std::string& text) {
  std::snprintf(dst, capacity, "%s", text.c_str());
}

RankInfo describeRank(const RankContext& context, hetcclRuntimeKind_t kind) {
  RankInfo info{};
  info.rank = context.rank;
  info.pid = static_cast<int32_t>(getpid());
  info.runtime = kind;
  checkNccl(hetcclCommDomains(context.comm, &info.ndomains, &info.domain),
            "hetcclCommDomains", context.comm);
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  copyText(info.host, sizeof(info.host), host);
  copyText(info.device, sizeof(info.device), context.device->describe());
  return info;
}

// The run of a rank whose place is known. Returns its exit status.
int runRankWithSetup(const Options& options, const RankSetup& setup) {
  if (options.root >= setup.nranks) {
    perfFail("-r/--root %d is not a rank (there are %d)", options.root,
             setup.nranks);
  }
  selectGpuForRank(setup.localRank);
  Communicator communicator(setup);

  hetcclRuntimeKind_t kind = hetcclRuntimeHost;
  checkNccl(hetcclCommRuntime(communicator.get(), &kind), "hetcclCommRuntime",
            communicator.get());
  const std::unique_ptr<Device> device = makeDevice(kind);
  int64_t wrong = 0;
  {
    DeviceStream stream(*device);
    const RankContext context{communicator.get(), setup.rank, setup.nranks,
                              device.get(), stream.get()};
    Control control(context);
    Reporter reporter(options, setup.rank == 0);
    int version = 0;
    checkNccl(ncclGetVersion(&version), "ncclGetVersion", nullptr);
    const RunDescription run{setup.nranks, version, setup.launcher,
                             communicator.initSeconds()};
    reporter.printHeader(run, control.allGather(describeRank(context, kind)));
    Benchmark benchmark(options, context, control, reporter);
    wrong = benchmark.run();
    reporter.printSummary();
  }
  communicator.destroy();
  return wrong > 0 ? kExitWrongResults : kExitOk;
}

// One rank's whole run. Returns its exit status.
int runRank(const Options& options) {
  // A rank started by -np is timed by its parent.
  Watchdog watchdog(isSpawnedRank() ? 0 : options.timeoutSec);
  if (options.domainsGiven) {
    setenv("HETCCL_DOMAINS", options.domains.c_str(), 1);
  }
  const RankSetup setup = discoverRank();
  try {
    return runRankWithSetup(options, setup);
  } catch (const std::exception& error) {
    // Name the rank: with several ranks on one terminal, it matters which.
    throw PerfError(strprintf("rank %d: %s", setup.rank, error.what()));
  }
}

int runMain(int argc, char** argv) {
  Options options;
  try {
    options = parseOptions(argc, argv);
  } catch (const PerfError& error) {
    std::fprintf(stderr, "hetccl-perf: %s\n", error.what());
    return kExitError;
  }
  if (options.showHelp) {
    std::fputs(helpText("hetccl-perf").c_str(), stdout);
    return kExitOk;
  }
  try {
    if (options.showVersion) {
      int version = 0;
      checkNccl(ncclGetVersion(&version), "ncclGetVersion", nullptr);
      std::printf("hetccl-perf (HetCCL %d.%d.%d), library ncclGetVersion %d\n",
                  HETCCL_MAJOR, HETCCL_MINOR, HETCCL_PATCH, version);
      return kExitOk;
    }
    if (options.localRanks > 0 && !isSpawnedRank()) {
      return runLocalRanks(options, argv);
    }
    return runRank(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hetccl-perf: %s\n", error.what());
    return kExitError;
  }
}

}  // namespace
}  // namespace perf
}  // namespace hetccl

int main(int argc, char** argv) { return hetccl::perf::runMain(argc, argv); }
