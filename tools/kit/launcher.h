// Starts the ranks of a single-host run as forked child processes and
// supervises them: one environment per rank, every exit status collected,
// the others stopped when one rank fails or the run times out, and no rank
// outliving the process that started it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace hetccl::kit {

// How one rank process ended.
struct RankExit {
  pid_t pid = -1;
  bool exited = false;  // normal exit: `code` is valid
  int code = 0;
  bool signaled = false;  // ended by a signal: `signal` is valid
  int signal = 0;
  // The launcher ended it: the timeout passed, another rank failed, or a
  // stop was requested.
  bool stopped = false;

  bool succeeded() const { return exited && code == 0; }
  // The shell's convention: the exit code, or 128 + the signal.
  int shellStatus() const { return exited ? code : 128 + signal; }
  // "exited with status 3", "was killed by signal 11 (Segmentation
  // fault)", "was still running at the deadline and was stopped".
  std::string describe() const;
};

struct LaunchOptions {
  int nranks = 1;
  // The whole run, from the first fork; <= 0: no limit.
  double timeoutSeconds = 0;
  // Variables each rank gets on top of this process's environment.
  std::function<std::map<std::string, std::string>(int rank)> rankEnvironment;
  // Inherited variables whose name starts with one of these are not passed
  // on (stale settings of an outer run).
  std::vector<std::string> droppedPrefixes;
  // True for an end that must not stop the other ranks; unset: exit 0 only.
  std::function<bool(int rank, const RankExit& exit)> isExpected;
  // After an unexpected end, how long the others may run on (they usually
  // notice the failure themselves and say what they saw) before they are
  // stopped.
  double graceAfterFailureSeconds = 0;
  // Stopping sends SIGTERM, waits this long, then sends SIGKILL; 0: SIGKILL
  // at once.
  double terminateGraceSeconds = 0;
  // Runs in this process once every rank is started, before the waiting.
  std::function<void(const std::vector<pid_t>& pids)> whileRunning;
  // Polled while waiting; true stops every rank (e.g. after a SIGINT).
  std::function<bool()> stopRequested;
};

struct LaunchReport {
  std::vector<RankExit> ranks;
  double seconds = 0;
  bool timedOut = false;
  bool stopRequested = false;
  int firstUnexpectedRank = -1;  // -1: every rank ended as expected

  bool ok() const {
    return !timedOut && !stopRequested && firstUnexpectedRank < 0;
  }
};

// Forks options.nranks children. Child r gets its environment, runs
// rankMain(r) (which may exec) and exits with its return value, or with 1
// after printing an exception that escaped it. Throws std::system_error if
// fork fails, after killing the ranks already started.
LaunchReport launchRanks(const LaunchOptions& options,
                         const std::function<int(int rank)>& rankMain);

}  // namespace hetccl::kit
