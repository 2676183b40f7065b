// hetccl-perf: bandwidth and correctness benchmark for HetCCL with
// nccl-tests semantics. Uses only the public API (nccl.h, hetccl.h), of the
// linked HetCCL or of the library given with --nccl-library.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hetccl.h"
#include "perf/benchmark.h"
#include "perf/communicator.h"
#include "perf/control.h"
#include "perf/device.h"
#include "perf/explain.h"
#include "perf/local_ranks.h"
#include "perf/nccl_api.h"
#include "perf/options.h"
#include "perf/perf_error.h"
#include "perf/rank_description.h"
#include "perf/rank_env.h"
#include "perf/report.h"
#include "perf/watchdog.h"

namespace hetccl {
namespace perf {
namespace {

// Rank 0's decisions, in the report's comment style; each size class of
// each kind was logged when it first ran.
void printDecisions(const Explain& explain) {
  const std::vector<std::string> decisions = explain.decisions();
  std::printf("# HetCCL's decisions on rank 0 (--explain):%s\n",
              decisions.empty() ? " none logged" : "");
  for (const std::string& line : decisions)
    std::printf("#   %s\n", line.c_str());
}

// The run of a rank whose place is known. Returns its exit status.
int runRankWithSetup(const Options& options, const NcclApi& nccl,
                     const RankSetup& setup, const Explain* explain) {
  if (options.root >= setup.nranks) {
    perfFail("-r/--root %d is not a rank (there are %d)", options.root,
             setup.nranks);
  }
  const GpuSelection gpu = selectGpuForRank(setup.localRank);
  if (!nccl.hasHetcclExtensions() && !gpu.found) {
    perfFail("%s is not HetCCL, so this rank must be a GPU rank, but %s",
             nccl.describe().c_str(), gpu.text.c_str());
  }
  Communicator communicator(nccl, setup);
  const hetcclRuntimeKind_t kind = rankRuntime(nccl, communicator.get(), gpu);
  const std::unique_ptr<Device> device = makeDevice(kind, nccl);
  int64_t wrong = 0;
  {
    DeviceStream stream(*device);
    const RankContext context{&nccl,        communicator.get(), setup.rank,
                              setup.nranks, device.get(),       stream.get()};
    Control control(context);
    Reporter reporter(options, setup.rank == 0);
    int version = 0;
    nccl.check(nccl.getVersion(&version), "ncclGetVersion", nullptr);
    const RunDescription run{setup.nranks,
                             version,
                             nccl.describe(),
                             setup.launcher,
                             communicator.initSeconds(),
                             topologyOf(nccl, communicator.get())};
    reporter.printHeader(run, control.allGather(describeRank(context, kind)));
    Benchmark benchmark(options, context, control, reporter);
    const AbortOnException abortFirst(communicator);
    wrong = benchmark.run();
    reporter.printSummary();
  }
  communicator.destroy();
  if (explain && setup.rank == 0) printDecisions(*explain);
  return wrong > 0 ? kExitWrongResults : kExitOk;
}

// Rank `thread` of this process's -t ranks: numbered on from the
// process's place among the processes.
RankSetup threadRank(const RankSetup& process, int threads, int thread) {
  RankSetup setup = process;
  setup.rank = process.rank * threads + thread;
  setup.nranks = process.nranks * threads;
  setup.localRank = process.localRank * threads + thread;
  setup.launcher =
      process.nranks == 1
          ? strprintf("none (one process of %d ranks as threads)", threads)
          : process.launcher +
                strprintf(", %d ranks per process as threads", threads);
  return setup;
}

// One rank's run; an error names the rank (with several ranks on one
// terminal, it matters which) and gives kExitError.
int runNamedRank(const Options& options, const NcclApi& nccl,
                 const RankSetup& setup, const Explain* explain) {
  try {
    return runRankWithSetup(options, nccl, setup, explain);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hetccl-perf: rank %d: %s\n", setup.rank,
                 error.what());
    return kExitError;
  }
}

// This process's ranks, one per thread (-t): they share the process as the
// ranks of a multi-threaded program do (one GPU context, one library
// instance). Returns the worst exit status among them (an error before
// wrong results before success).
int runProcessRanks(const Options& options, const NcclApi& nccl) {
  // A rank started by -np is timed by its parent.
  Watchdog watchdog(isSpawnedRank() ? 0 : options.timeoutSec);
  if (options.domainsGiven) {
    setenv("HETCCL_DOMAINS", options.domains.c_str(), 1);
  }
  std::optional<Explain> explain;
  if (options.explain) explain.emplace();
  const Explain* decisions = explain ? &*explain : nullptr;
  const RankSetup process = discoverRank(nccl);
  const int threads = options.threadsPerProcess;
  if (threads == 1) return runNamedRank(options, nccl, process, decisions);
  std::vector<int> exits(threads, kExitOk);
  std::vector<std::thread> ranks;
  for (int thread = 0; thread < threads; ++thread) {
    ranks.emplace_back([&, thread] {
      exits[thread] = runNamedRank(
          options, nccl, threadRank(process, threads, thread), decisions);
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return *std::max_element(exits.begin(), exits.end());
}

// A library that is not HetCCL has only GPU ranks, in one domain: refuses,
// before any rank starts, what would ask for anything else.
void checkLibraryFits(const Options& options, const NcclApi& nccl) {
  if (nccl.hasHetcclExtensions()) return;
  const std::string library = nccl.describe();
  const char* notHetccl =
      "is not HetCCL (it does not export hetcclCommRuntime)";
  if (options.domainsGiven) {
    perfFail("-D/--domains forces HetCCL's domains, but %s %s", library.c_str(),
             notHetccl);
  }
  const char* domains = std::getenv("HETCCL_DOMAINS");
  if (domains && *domains) {
    perfFail(
        "HETCCL_DOMAINS=%s is set, but %s %s and would ignore it; unset it",
        domains, library.c_str(), notHetccl);
  }
  if (cpuRanksForced()) {
    perfFail(
        "HETCCL_FORCE_CPU=%s asks for CPU ranks, but %s %s: its ranks can only "
        "be GPUs (CPU ranks need the linked HetCCL: drop --nccl-library)",
        std::getenv("HETCCL_FORCE_CPU"), library.c_str(), notHetccl);
  }
  std::string why;
  if (!gpusPresent(&why)) {
    perfFail(
        "%s %s, so every rank must be a GPU rank, but no GPU was found (%s); "
        "CPU ranks need the linked HetCCL: drop --nccl-library",
        library.c_str(), notHetccl, why.c_str());
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
    const NcclApi nccl = options.ncclLibrary.empty()
                             ? linkedNcclApi()
                             : loadNcclApi(options.ncclLibrary);
    if (options.showVersion) {
      int version = 0;
      nccl.check(nccl.getVersion(&version), "ncclGetVersion", nullptr);
      std::printf("hetccl-perf (HetCCL %d.%d.%d), %s: ncclGetVersion %d\n",
                  HETCCL_MAJOR, HETCCL_MINOR, HETCCL_PATCH,
                  nccl.describe().c_str(), version);
      return kExitOk;
    }
    checkLibraryFits(options, nccl);
    if (options.localRanks > 0 && !isSpawnedRank()) {
      return runLocalRanks(options, nccl, argv);
    }
    return runProcessRanks(options, nccl);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hetccl-perf: %s\n", error.what());
    return kExitError;
  }
}

}  // namespace
}  // namespace perf
}  // namespace hetccl

int main(int argc, char** argv) { return hetccl::perf::runMain(argc, argv); }
