#include "kit/launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>
#include <system_error>
#include <thread>

extern char** environ;

namespace hetccl::kit {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kPollInterval = std::chrono::milliseconds(5);

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

// One rank's environment, built before fork: between fork and exec a
// multi-threaded parent may not allocate, so the child only points
// `environ` at it.
class EnvironmentBlock {
 public:
  EnvironmentBlock(const std::map<std::string, std::string>& overrides,
                   const std::vector<std::string>& droppedPrefixes) {
    for (char** entry = environ; *entry; ++entry) {
      if (!isReplaced(*entry, overrides, droppedPrefixes)) {
        strings_.emplace_back(*entry);
      }
    }
    for (const auto& [name, value] : overrides) {
      strings_.push_back(name + "=" + value);
    }
    for (std::string& text : strings_) pointers_.push_back(text.data());
    pointers_.push_back(nullptr);
  }

  char** get() { return pointers_.data(); }

 private:
  static bool isReplaced(std::string_view entry,
                         const std::map<std::string, std::string>& overrides,
                         const std::vector<std::string>& droppedPrefixes) {
    const std::string_view name = entry.substr(0, entry.find('='));
    for (const std::string& prefix : droppedPrefixes) {
      if (name.substr(0, prefix.size()) == prefix) return true;
    }
    return overrides.count(std::string(name)) > 0;
  }

  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

std::vector<EnvironmentBlock> makeEnvironments(const LaunchOptions& options) {
  std::vector<EnvironmentBlock> blocks;
  for (int rank = 0; rank < options.nranks; ++rank) {
    blocks.emplace_back(options.rankEnvironment
                            ? options.rankEnvironment(rank)
                            : std::map<std::string, std::string>(),
                        options.droppedPrefixes);
  }
  return blocks;
}

[[noreturn]] void runRank(int rank, pid_t parent, char** environment,
                          const std::function<int(int)>& rankMain) {
  // Die with the parent, even if it is killed without cleaning up.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  environ = environment;
  int code = 1;
  try {
    code = rankMain(rank);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "rank %d: %s\n", rank, error.what());
  } catch (...) {
    std::fprintf(stderr, "rank %d: an exception of unknown type\n", rank);
  }
  std::fflush(nullptr);
  // _exit: the parent's atexit handlers and static objects are not ours.
  _exit(code);
}

void recordStatus(int status, RankExit* exit) {
  exit->exited = WIFEXITED(status);
  exit->code = exit->exited ? WEXITSTATUS(status) : 0;
  exit->signaled = WIFSIGNALED(status);
  exit->signal = exit->signaled ? WTERMSIG(status) : 0;
}

// The started ranks; kills and reaps those still running when it goes, so
// that an exception in the parent leaves no rank behind.
class RankGroup {
 public:
  explicit RankGroup(LaunchReport* report) : report_(report) {}
  ~RankGroup() { stop(0); }
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  void add(pid_t pid) {
    report_->ranks.emplace_back().pid = pid;
    running_.push_back(true);
  }

  std::vector<pid_t> pids() const {
    std::vector<pid_t> result;
    for (const RankExit& rank : report_->ranks) result.push_back(rank.pid);
    return result;
  }

  bool anyRunning() const {
    for (bool running : running_) {
      if (running) return true;
    }
    return false;
  }

  // Reaps the ranks that have ended; returns those that did, in rank order.
  std::vector<int> reapEnded() {
    std::vector<int> ended;
    for (size_t rank = 0; rank < running_.size(); ++rank) {
      if (running_[rank] && tryReap(rank)) ended.push_back(rank);
    }
    return ended;
  }

  // SIGTERM, up to `terminateGraceSeconds` to exit, then SIGKILL.
  void stop(double terminateGraceSeconds) {
    if (terminateGraceSeconds > 0) {
      signalRunning(SIGTERM);
      const Clock::time_point graceEnd = after(terminateGraceSeconds);
      while (anyRunning() && Clock::now() < graceEnd) {
        reapStopped();
        std::this_thread::sleep_for(kPollInterval);
      }
    }
    signalRunning(SIGKILL);
    for (size_t rank = 0; rank < running_.size(); ++rank) {
      if (!running_[rank]) continue;
      int status = 0;
      waitpid(report_->ranks[rank].pid, &status, 0);
      finish(rank, status, true);
    }
  }

 private:
  bool tryReap(size_t rank) {
    int status = 0;
    if (waitpid(report_->ranks[rank].pid, &status, WNOHANG) !=
        report_->ranks[rank].pid) {
      return false;
    }
    finish(rank, status, false);
    return true;
  }

  void reapStopped() {
    for (size_t rank = 0; rank < running_.size(); ++rank) {
      int status = 0;
      if (running_[rank] && waitpid(report_->ranks[rank].pid, &status,
                                    WNOHANG) == report_->ranks[rank].pid) {
        finish(rank, status, true);
      }
    }
  }

  void signalRunning(int signalNumber) {
    for (size_t rank = 0; rank < running_.size(); ++rank) {
      if (running_[rank]) kill(report_->ranks[rank].pid, signalNumber);
    }
  }

  void finish(size_t rank, int status, bool stopped) {
    running_[rank] = false;
    recordStatus(status, &report_->ranks[rank]);
    report_->ranks[rank].stopped = stopped;
  }

  LaunchReport* report_;
  std::vector<bool> running_;
};

bool isExpected(const LaunchOptions& options, int rank, const RankExit& exit) {
  return options.isExpected ? options.isExpected(rank, exit) : exit.succeeded();
}

// Waits until every rank has ended, or until a reason to stop the rest: the
// timeout, the grace after an unexpected end, or a stop request.
void waitForRanks(const LaunchOptions& options, RankGroup& group,
                  LaunchReport& report) {
  const bool hasTimeout = options.timeoutSeconds > 0;
  const Clock::time_point timeout = after(options.timeoutSeconds);
  Clock::time_point failureDeadline = Clock::time_point::max();
  while (group.anyRunning()) {
    // Before reaping: a terminal's Ctrl-C reaches the ranks too, and the
    // request, not the ranks it killed, is what happened.
    if (options.stopRequested && options.stopRequested()) {
      report.stopRequested = true;
      return;
    }
    for (int rank : group.reapEnded()) {
      if (report.firstUnexpectedRank >= 0 ||
          isExpected(options, rank, report.ranks[rank])) {
        continue;
      }
      report.firstUnexpectedRank = rank;
      failureDeadline = after(options.graceAfterFailureSeconds);
    }
    if (!group.anyRunning()) return;
    const Clock::time_point now = Clock::now();
    if (now >= failureDeadline) return;
    if (hasTimeout && now >= timeout) {
      report.timedOut = true;
      return;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace

std::string RankExit::describe() const {
  std::string text;
  if (stopped) {
    text = "was still running at the deadline and was stopped";
  } else if (signaled) {
    text = "was killed by signal " + std::to_string(signal) + " (" +
           strsignal(signal) + ")";
  } else {
    text = "exited with status " + std::to_string(code);
  }
  return text;
}

LaunchReport launchRanks(const LaunchOptions& options,
                         const std::function<int(int rank)>& rankMain) {
  std::vector<EnvironmentBlock> environments = makeEnvironments(options);
  LaunchReport report;
  const Clock::time_point start = Clock::now();
  {
    RankGroup group(&report);
    const pid_t parent = getpid();
    std::fflush(nullptr);  // or buffered output would be printed by each child
    for (int rank = 0; rank < options.nranks; ++rank) {
      const pid_t pid = fork();
      if (pid < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
      if (pid == 0) runRank(rank, parent, environments[rank].get(), rankMain);
      group.add(pid);
    }
    if (options.whileRunning) options.whileRunning(group.pids());
    waitForRanks(options, group, report);
    group.stop(options.terminateGraceSeconds);
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace hetccl::kit
