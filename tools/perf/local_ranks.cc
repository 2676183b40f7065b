#include "perf/local_ranks.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "kit/launcher.h"
#include "perf/perf_error.h"
#include "perf/rank_env.h"

extern char** environ;

namespace hetccl {
namespace perf {
namespace {

// Set by SIGINT/SIGTERM/SIGHUP: the supervisor stops the ranks and exits.
std::atomic<int> receivedSignal{0};

void recordSignal(int signalNumber) { receivedSignal = signalNumber; }

void installSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = recordSignal;
  sigemptyset(&action.sa_mask);
  for (int signalNumber : {SIGINT, SIGTERM, SIGHUP}) {
    sigaction(signalNumber, &action, nullptr);
  }
}

// A rank's place and the unique id; stale HETCCL_PERF_* entries of an outer
// run are dropped.
std::map<std::string, std::string> rankVariables(
    int rank, int nranks, const std::string& uniqueIdHex) {
  return {{kEnvRank, std::to_string(rank)},
          {kEnvNranks, std::to_string(nranks)},
          {kEnvLocalRank, std::to_string(rank)},
          {kEnvUniqueId, uniqueIdHex}};
}

// Runs in the child before exec: the launcher has set its environment.
int execRank(char** argv) {
  execve("/proc/self/exe", argv, environ);
  static const char kMessage[] = "hetccl-perf: cannot exec /proc/self/exe\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  return 127;
}

// What went wrong, on stderr; the exit status for the whole run.
int summarize(const kit::LaunchReport& report, double timeoutSec) {
  // A terminal's Ctrl-C reaches the ranks too: report the signal, not the
  // ranks it killed.
  if (const int signalNumber = receivedSignal.load()) {
    std::fprintf(stderr, "hetccl-perf: %s; stopping the ranks\n",
                 strsignal(signalNumber));
    return 128 + signalNumber;
  }
  if (report.timedOut) {
    std::fprintf(stderr,
                 "hetccl-perf: timed out after %g s (--timeout); stopping "
                 "the ranks\n",
                 timeoutSec);
    return kExitTimeout;
  }
  if (report.firstUnexpectedRank >= 0) {
    const kit::RankExit& failed = report.ranks[report.firstUnexpectedRank];
    std::fprintf(stderr,
                 "hetccl-perf: rank %d (pid %d) %s; stopping the other ranks\n",
                 report.firstUnexpectedRank, static_cast<int>(failed.pid),
                 failed.describe().c_str());
    return kExitError;
  }
  for (const kit::RankExit& rank : report.ranks) {
    if (rank.code == kExitWrongResults) return kExitWrongResults;
  }
  return kExitOk;
}

}  // namespace

int runLocalRanks(const Options& options, const NcclApi& nccl, char** argv) {
  const int nranks = options.localRanks * options.threadsPerProcess;
  if (options.root >= nranks) {
    perfFail("-r/--root %d is not a rank (-np %d -t %d: %d ranks)",
             options.root, options.localRanks, options.threadsPerProcess,
             nranks);
  }
  if (options.domainsGiven)
    setenv("HETCCL_DOMAINS", options.domains.c_str(), 1);
  ncclUniqueId id;
  nccl.check(nccl.getUniqueId(&id), "ncclGetUniqueId", nullptr);
  const std::string hex = uniqueIdToHex(id);
  kit::LaunchOptions launch;
  launch.nranks = options.localRanks;
  launch.timeoutSeconds = options.timeoutSec;
  launch.rankEnvironment = [&](int rank) {
    return rankVariables(rank, options.localRanks, hex);
  };
  launch.droppedPrefixes = {"HETCCL_PERF_"};
  // Wrong results are reported by the rank itself; only a failure stops the
  // others.
  launch.isExpected = [](int, const kit::RankExit& exit) {
    return exit.exited &&
           (exit.code == kExitOk || exit.code == kExitWrongResults);
  };
  launch.terminateGraceSeconds = 3;
  launch.stopRequested = [] { return receivedSignal.load() != 0; };
  installSignalHandlers();
  const kit::LaunchReport report =
      kit::launchRanks(launch, [argv](int) { return execRank(argv); });
  return summarize(report, options.timeoutSec);
}

}  // namespace perf
}  // namespace hetccl
