#include "fork_launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

namespace hetccl::bench {
namespace {

// The children still running; kills and reaps them when it goes, so that
// an early return or an exception in the parent leaves no rank behind.
class ChildSet {
 public:
  ~ChildSet() {
    for (pid_t pid : running_) kill(pid, SIGKILL);
    for (pid_t pid : running_) waitpid(pid, nullptr, 0);
  }
  void add(pid_t pid) { running_.push_back(pid); }
  bool empty() const { return running_.empty(); }

  // Reaps the children that have exited; returns the first bad status seen.
  int reapFinished() {
    int firstBad = 0;
    for (size_t i = 0; i < running_.size();) {
      int status = 0;
      pid_t done = waitpid(running_[i], &status, WNOHANG);
      if (done == 0) {
        ++i;
        continue;
      }
      int code = exitCode(status);
      if (code != 0 && firstBad == 0) firstBad = code;
      running_.erase(running_.begin() + i);
    }
    return firstBad;
  }

 private:
  static int exitCode(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
  }
  std::vector<pid_t> running_;
};

[[noreturn]] void runChild(int rank, pid_t parent,
                           const std::function<int(int)>& rankMain) {
  // Die with the parent, even if it is killed without cleaning up.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  int code = 1;
  try {
    code = rankMain(rank);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
  }
  std::fflush(nullptr);
  // _exit: the parent's atexit handlers and static objects are not ours.
  _exit(code);
}

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + pattern + ": " + strerror(errno));
  path_ = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

int runForkedRanks(int nranks, std::chrono::seconds timeout,
                   const std::function<int(int rank)>& rankMain) {
  std::fflush(nullptr);  // or buffered output would be printed by each child
  const pid_t parent = getpid();
  ChildSet children;
  for (int rank = 0; rank < nranks; ++rank) {
    pid_t pid = fork();
    if (pid < 0)
      throw std::runtime_error(std::string("fork: ") + strerror(errno));
    if (pid == 0) runChild(rank, parent, rankMain);
    children.add(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int firstBad = 0;
  while (!children.empty()) {
    int bad = children.reapFinished();
    if (bad != 0 && firstBad == 0) firstBad = bad;
    // One failed rank leaves the others blocked in a collective: end them.
    if (firstBad != 0) return firstBad;
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "ranks still running after %llds: killed\n",
                   static_cast<long long>(timeout.count()));
      return 124;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return firstBad;
}

}  // namespace hetccl::bench
