// hetccl-doctor: a readiness check of a job's ranks, started by the same
// launcher as the job (torchrun, srun, mpirun) or with -np N locally. Every
// rank forms the communicator the job would, checks every collective on
// small sizes, and probes each domain's library and each link between
// domains; rank 0 prints the report once (findings.h). Exit status: 0 when
// everything checked is right, 1 when a problem was found, 2 when the
// doctor itself could not run.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "doctor/findings.h"
#include "doctor/library_warnings.h"
#include "doctor/probes.h"
#include "doctor/rank_settings.h"
#include "kit/byte_size.h"
#include "perf/benchmark.h"
#include "perf/communicator.h"
#include "perf/control.h"
#include "perf/local_ranks.h"
#include "perf/options.h"
#include "perf/perf_error.h"
#include "perf/rank_description.h"
#include "perf/rank_env.h"
#include "perf/watchdog.h"

namespace hetccl {
namespace doctor {
namespace {

constexpr const char* kUsage =
    "usage: hetccl-doctor [-np N] [--json FILE] [--probe-bytes SIZE]\n"
    "                     [--min-link-bandwidth GBPS] [--timeout SECONDS]\n"
    "A readiness check of a job's ranks: start it as the job starts\n"
    "(torchrun ... hetccl-doctor, srun hetccl-doctor, mpirun hetccl-doctor),\n"
    "or with -np N for N ranks on this host. Rank 0 prints one report: hosts,\n"
    "domains, the transport of every pair of domains, a check of every\n"
    "collective on small sizes, the latency and bandwidth of each domain's\n"
    "library and of each link between domains, and every problem found.\n"
    "Exit status 0 only when everything checked is right.\n"
    "  -np N              start N ranks here\n"
    "  --json FILE        the report as one JSON object (rank 0 writes it)\n"
    "  --probe-bytes SIZE the bandwidth probes' all-reduce (default 4M)\n"
    "  --min-link-bandwidth GBPS\n"
    "                     a link between domains slower than this (busbw,\n"
    "                     GB/s) is a problem (default 0.1: below gigabit\n"
    "                     Ethernet)\n"
    "  --timeout SECONDS  give up after this long (default 300)\n";
// The checks: every collective, two types, two ops, 8 B to 64 KB.
const char* const kCheckArguments[] = {"hetccl-doctor",
                                       "-x",
                                       "all",
                                       "-d",
                                       "float32,int8",
                                       "-o",
                                       "sum,max",
                                       "-b",
                                       "8",
                                       "-e",
                                       "64K",
                                       "-f",
                                       "8",
                                       "-w",
                                       "0",
                                       "-n",
                                       "1",
                                       "--check",
                                       "1"};
constexpr const char* kChecksCovered =
    "every collective, float32 and int8, sum and max, 8 B to 64 KB, in and out "
    "of place";

struct DoctorOptions {
  int localRanks = 0;
  std::string jsonPath;
  size_t probeBytes = size_t{4} << 20;
  double minLinkGBps = 0.1;
  double timeoutSeconds = 300;
  bool help = false;
};

DoctorOptions parseArguments(int argc, char** argv) {
  DoctorOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) perf::perfFail("%s needs a value", arg.c_str());
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "-np") {
      options.localRanks = std::atoi(value().c_str());
      if (options.localRanks < 1) perf::perfFail("-np needs a count of ranks");
    } else if (arg == "--json") {
      options.jsonPath = value();
    } else if (arg == "--probe-bytes") {
      const std::string text = value();
      const std::optional<size_t> bytes = kit::parseByteSize(text);
      if (!bytes || *bytes < 64)
        perf::perfFail("--probe-bytes %s", text.c_str());
      options.probeBytes = *bytes;
    } else if (arg == "--min-link-bandwidth") {
      options.minLinkGBps = std::atof(value().c_str());
    } else if (arg == "--timeout") {
      options.timeoutSeconds = std::atof(value().c_str());
    } else {
      perf::perfFail("unknown argument %s", arg.c_str());
    }
  }
  return options;
}

std::string releaseOf(const perf::NcclApi& nccl) {
  int version = 0;
  nccl.check(nccl.getVersion(&version), "ncclGetVersion", nullptr);
  return std::to_string(HETCCL_MAJOR) + "." + std::to_string(HETCCL_MINOR) +
         "." + std::to_string(HETCCL_PATCH) + " (NCCL API " +
         std::to_string(version) + ")";
}

// Rank 0's part: the report on stdout and, if asked, the JSON file.
void publish(const DoctorOptions& options, const Findings& findings) {
  std::fputs(reportText(findings).c_str(), stdout);
  std::fflush(stdout);
  if (options.jsonPath.empty()) return;
  std::ofstream json(options.jsonPath);
  json << reportJson(findings) << "\n";
  if (!json) perf::perfFail("cannot write %s", options.jsonPath.c_str());
}

// Everything a rank checks once its communicator exists, the library's
// warnings until then included.
Findings examine(const DoctorOptions& options, const perf::NcclApi& nccl,
                 const perf::RankSetup& setup, perf::Communicator& communicator,
                 const perf::GpuSelection& gpu,
                 const LibraryWarnings& libraryWarnings) {
  const hetcclRuntimeKind_t kind =
      perf::rankRuntime(nccl, communicator.get(), gpu);
  const std::unique_ptr<perf::Device> device = perf::makeDevice(kind, nccl);
  Findings findings;
  {
    perf::DeviceStream stream(*device);
    const perf::RankContext context{&nccl,        communicator.get(),
                                    setup.rank,   setup.nranks,
                                    device.get(), stream.get()};
    const perf::AbortOnException abortFirst(communicator);
    perf::Control control(context);
    findings.nranks = setup.nranks;
    findings.release = releaseOf(nccl);
    findings.topology = perf::topologyOf(nccl, communicator.get());
    findings.ranks = control.allGather(perf::describeRank(context, kind));
    findings.ndomains = findings.ranks.front().ndomains;
    findings.domainLibraries =
        control.allGather(perf::domainLibraryOf(nccl, communicator.get()));
    findings.settingProblems = control.allGather(settingProblemsHere());
    findings.gpuBuffers =
        control.allGather(perf::gpuBuffersOf(nccl, communicator.get()));
    std::vector<int> domainOf;
    for (const perf::RankInfo& rank : findings.ranks)
      domainOf.push_back(rank.domain);

    const perf::Options checks =
        perf::parseOptions(sizeof kCheckArguments / sizeof kCheckArguments[0],
                           const_cast<char**>(kCheckArguments));
    perf::Reporter quiet(checks, false);
    perf::Benchmark benchmark(checks, context, control, quiet);
    findings.checks = kChecksCovered;
    findings.wrong = benchmark.run();

    findings.probeBytes = options.probeBytes;
    findings.minLinkGBps = options.minLinkGBps;
    findings.probes =
        probeDomainsAndLinks(context, control, domainOf, options.probeBytes);

    const std::vector<std::string> mine = libraryWarnings.read();
    findings.warnings = static_cast<long long>(
        control.allReduce(static_cast<double>(mine.size()), ncclSum));
    findings.warningRanks =
        static_cast<int>(control.allReduce(mine.empty() ? 0 : 1, ncclSum));
    if (setup.rank == 0) findings.rankZeroWarnings = mine;
  }
  communicator.destroy();
  return findings;
}

// The library's warnings went to the doctor's file: each rank prints its
// own, so that none is lost.
void printWarnings(const LibraryWarnings& warnings, int rank) {
  for (const std::string& warning : warnings.read())
    std::fprintf(stderr, "hetccl-doctor: rank %d: the library warned: %s\n",
                 rank, warning.c_str());
}

int runRank(const DoctorOptions& options, const perf::NcclApi& nccl) {
  perf::Watchdog watchdog(perf::isSpawnedRank() ? 0 : options.timeoutSeconds);
  const LibraryWarnings libraryWarnings;  // before the library reads its log
  const perf::RankSetup setup = perf::discoverRank(nccl);
  const perf::GpuSelection gpu = perf::selectGpuForRank(setup.localRank);
  Findings findings;
  try {
    perf::Communicator communicator(nccl, setup);
    findings =
        examine(options, nccl, setup, communicator, gpu, libraryWarnings);
  } catch (const std::exception& error) {
    // The init failed (or the checks could not run): every rank says what
    // it saw; rank 0 writes the report of it.
    findings.release = releaseOf(nccl);
    findings.initFailure = error.what();
    std::fprintf(stderr, "hetccl-doctor: rank %d: %s\n", setup.rank,
                 error.what());
    const std::string settings = settingProblemsHere();
    if (!settings.empty())
      std::fprintf(stderr, "hetccl-doctor: rank %d: %s\n", setup.rank,
                   settings.c_str());
  }
  printWarnings(libraryWarnings, setup.rank);
  if (setup.rank == 0) publish(options, findings);
  return problemsOf(findings).empty() ? 0 : perf::kExitWrongResults;
}

int runMain(int argc, char** argv) {
  try {
    const DoctorOptions options = parseArguments(argc, argv);
    if (options.help) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    const perf::NcclApi& nccl = perf::linkedNcclApi();
    if (options.localRanks > 0 && !perf::isSpawnedRank()) {
      perf::Options launch;
      launch.localRanks = options.localRanks;
      launch.timeoutSec = options.timeoutSeconds;
      return perf::runLocalRanks(launch, nccl, argv);
    }
    return runRank(options, nccl);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hetccl-doctor: %s\n", error.what());
    return perf::kExitError;
  }
}

}  // namespace
}  // namespace doctor
}  // namespace hetccl

int main(int argc, char** argv) { return hetccl::doctor::runMain(argc, argv); }
