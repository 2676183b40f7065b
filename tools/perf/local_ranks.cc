#include "perf/local_ranks.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "perf/perf_error.h"
#include "perf/rank_env.h"

extern char** environ;

namespace hetccl {
namespace perf {
namespace {

using Clock = std::chrono::steady_clock;

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

// The environment of one rank: ours, minus stale HETCCL_PERF_* entries, plus
// the rank's place and the unique id. Built before fork, because between
// fork and exec a multi-threaded parent may not allocate.
class RankEnvironment {
 public:
  RankEnvironment(int rank, int nranks, const std::string& uniqueIdHex) {
    for (char** entry = environ; *entry; ++entry) {
      if (std::strncmp(*entry, "HETCCL_PERF_", 12) != 0) {
        strings_.emplace_back(*entry);
      }
    }
    strings_.push_back(std::string(kEnvRank) + "=" + std::to_string(rank));
    strings_.push_back(std::string(kEnvNranks) + "=" + std::to_string(nranks));
    strings_.push_back(std::string(kEnvLocalRank) + "=" + std::to_string(rank));
    strings_.push_back(std::string(kEnvUniqueId) + "=" + uniqueIdHex);
    for (std::string& text : strings_) pointers_.push_back(&text[0]);
    pointers_.push_back(nullptr);
  }

  char** get() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

struct Rank {
  int rank;
  pid_t pid;
  bool running;
};

// Runs in the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void execRank(char** argv, char** envp, pid_t parent) {
  // Die with the supervisor, so that no rank outlives a killed run.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(kExitError);
  execve("/proc/self/exe", argv, envp);
  static const char kMessage[] = "hetccl-perf: cannot exec /proc/self/exe\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  _exit(127);
}

class Supervisor {
 public:
  explicit Supervisor(double timeoutSec) : timeoutSec_(timeoutSec) {}

  ~Supervisor() { stopAll(); }

  void spawn(int rank, char** argv, char** envp) {
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) perfFail("fork failed: %s", std::strerror(errno));
    if (pid == 0) execRank(argv, envp, parent);
    ranks_.push_back(Rank{rank, pid, true});
  }

  int wait();

 private:
  bool reapExited();
  void onRankExit(Rank& rank, int status);
  void stopAll();
  bool anyRunning() const;

  double timeoutSec_;
  std::vector<Rank> ranks_;
  int result_ = kExitOk;
};

bool Supervisor::anyRunning() const {
  for (const Rank& rank : ranks_) {
    if (rank.running) return true;
  }
  return false;
}

void Supervisor::onRankExit(Rank& rank, int status) {
  rank.running = false;
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == kExitOk) return;
    if (code == kExitWrongResults) {
      if (result_ == kExitOk) result_ = kExitWrongResults;
      return;
    }
    std::fprintf(stderr,
                 "hetccl-perf: rank %d (pid %d) exited with status %d; "
                 "stopping the other ranks\n",
                 rank.rank, static_cast<int>(rank.pid), code);
  } else {
    std::fprintf(stderr,
                 "hetccl-perf: rank %d (pid %d) was killed by signal %d (%s); "
                 "stopping the other ranks\n",
                 rank.rank, static_cast<int>(rank.pid), WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
  }
  result_ = kExitError;
  stopAll();
}

// Collects ranks that have exited; true if any did.
bool Supervisor::reapExited() {
  bool any = false;
  for (Rank& rank : ranks_) {
    if (!rank.running) continue;
    int status = 0;
    if (waitpid(rank.pid, &status, WNOHANG) == rank.pid) {
      onRankExit(rank, status);
      any = true;
    }
  }
  return any;
}

// SIGTERM, a grace period to exit, then SIGKILL; reaps every rank.
void Supervisor::stopAll() {
  for (Rank& rank : ranks_) {
    if (rank.running) kill(rank.pid, SIGTERM);
  }
  const Clock::time_point graceEnd = Clock::now() + std::chrono::seconds(3);
  while (anyRunning() && Clock::now() < graceEnd) {
    for (Rank& rank : ranks_) {
      int status;
      if (rank.running && waitpid(rank.pid, &status, WNOHANG) == rank.pid) {
        rank.running = false;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (Rank& rank : ranks_) {
    if (!rank.running) continue;
    kill(rank.pid, SIGKILL);
    int status;
    waitpid(rank.pid, &status, 0);
    rank.running = false;
  }
}

int Supervisor::wait() {
  const Clock::time_point start = Clock::now();
  while (anyRunning()) {
    // A terminal's Ctrl-C reaches the ranks too: report the signal, not
    // the ranks it killed.
    if (const int signalNumber = receivedSignal.load()) {
      std::fprintf(stderr, "hetccl-perf: %s; stopping the ranks\n",
                   strsignal(signalNumber));
      stopAll();
      return 128 + signalNumber;
    }
    if (reapExited()) continue;
    const double elapsed =
        std::chrono::duration<double>(Clock::now() - start).count();
    if (timeoutSec_ > 0 && elapsed > timeoutSec_) {
      std::fprintf(stderr,
                   "hetccl-perf: timed out after %g s (--timeout); stopping "
                   "the ranks\n",
                   timeoutSec_);
      stopAll();
      return kExitTimeout;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return result_;
}

}  // namespace

int runLocalRanks(const Options& options, const NcclApi& nccl, char** argv) {
  if (options.root >= options.localRanks) {
    perfFail("-r/--root %d is not a rank (-np %d)", options.root,
             options.localRanks);
  }
  if (options.domainsGiven)
    setenv("HETCCL_DOMAINS", options.domains.c_str(), 1);
  ncclUniqueId id;
  nccl.check(nccl.getUniqueId(&id), "ncclGetUniqueId", nullptr);
  const std::string hex = uniqueIdToHex(id);
  std::vector<RankEnvironment> environments;
  for (int rank = 0; rank < options.localRanks; ++rank) {
    environments.emplace_back(rank, options.localRanks, hex);
  }
  installSignalHandlers();
  std::fflush(nullptr);  // no buffered output may be duplicated by fork
  Supervisor supervisor(options.timeoutSec);
  for (int rank = 0; rank < options.localRanks; ++rank) {
    supervisor.spawn(rank, argv, environments[rank].get());
  }
  return supervisor.wait();
}

}  // namespace perf
}  // namespace hetccl
