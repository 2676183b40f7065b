#include "harness/run_ranks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "harness/check.h"

namespace hetccl::mp {
namespace {

using Clock = std::chrono::steady_clock;

// After one rank fails unexpectedly, the others usually wait for it forever;
// give them this long to notice before killing them.
constexpr double kGraceAfterFailureSeconds = 5.0;

// Pipes that carry the unique id from rank 0 to each other rank.
class IdPipes {
 public:
  explicit IdPipes(int nranks) : fds_(nranks, {-1, -1}) {
    for (int r = 1; r < nranks; ++r) {
      if (::pipe2(fds_[r].data(), O_CLOEXEC) != 0) {
        ADD_FAILURE() << "pipe2: " << std::strerror(errno);
      }
    }
  }
  ~IdPipes() { closeAll(); }
  IdPipes(const IdPipes&) = delete;
  IdPipes& operator=(const IdPipes&) = delete;

  void closeAll() {
    for (auto& pair : fds_) {
      for (int& fd : pair) {
        if (fd >= 0) ::close(fd);
        fd = -1;
      }
    }
  }
  // In a child: keep only the ends this rank uses.
  void keepOnlyFor(int rank) {
    for (int r = 1; r < static_cast<int>(fds_.size()); ++r) {
      closeEnd(r, 0, rank == r);
      closeEnd(r, 1, rank == 0);
    }
  }
  int readEnd(int rank) const { return fds_[rank][0]; }
  int writeEnd(int rank) const { return fds_[rank][1]; }

 private:
  void closeEnd(int r, int end, bool keep) {
    if (!keep && fds_[r][end] >= 0) {
      ::close(fds_[r][end]);
      fds_[r][end] = -1;
    }
  }
  std::vector<std::array<int, 2>> fds_;
};

void writeAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    MP_CHECK(n > 0) << "writing the unique id: " << std::strerror(errno);
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void readIdFromRankZero(int fd, double timeoutSeconds, ncclUniqueId* id) {
  char* p = id->internal;
  size_t left = sizeof(id->internal);
  auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSeconds);
  while (left > 0) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    MP_CHECK(remaining.count() > 0) << "timed out waiting for rank 0's id";
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(remaining.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = ::read(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    MP_CHECK(n > 0) << "rank 0 ended without sending the unique id";
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void applyEnvironment(int rank, const RunOptions& options) {
  for (const auto& [name, value] : options.env) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  if (options.rankEnv) {
    for (const auto& [name, value] : options.rankEnv(rank)) {
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
}

std::string failureFile(const std::string& tempDir, int rank) {
  return tempDir + "/rank" + std::to_string(rank) + ".failures";
}

[[noreturn]] void runChild(int rank, int nranks, pid_t parent, IdPipes& pipes,
                           const std::string& tempDir,
                           const std::function<void(RankContext&)>& body,
                           const RunOptions& options) {
  // Never outlive the test process, even if it is killed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(3);
  pipes.keepOnlyFor(rank);
  applyEnvironment(rank, options);
  setFailureReporting(rank, failureFile(tempDir, rank));

  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (options.createUniqueId) {
    if (rank == 0) {
      MP_CHECK_NCCL(ncclGetUniqueId(&id));
      for (int r = 1; r < nranks; ++r) {
        writeAll(pipes.writeEnd(r), &id, sizeof(id));
      }
    } else {
      readIdFromRankZero(pipes.readEnd(rank), options.timeoutSeconds, &id);
    }
  }
  pipes.closeAll();

  RankContext context(rank, nranks, id, tempDir, options.timeoutSeconds);
  try {
    body(context);
  } catch (const std::exception& e) {
    MP_FAIL() << "uncaught exception: " << e.what();
  } catch (...) {
    MP_FAIL() << "uncaught exception of unknown type";
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(0);
}

std::string makeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/hetccl-mp-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << pattern << "): " << std::strerror(errno);
    return std::string();
  }
  return buffer.data();
}

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  if (in) contents << in.rdbuf();
  return contents.str();
}

std::string describeOutcome(const RankOutcome& outcome) {
  std::ostringstream text;
  if (outcome.timedOut) {
    text << "was still running at the deadline and was killed";
  } else if (outcome.signaled) {
    text << "was killed by signal " << outcome.signal << " ("
         << ::strsignal(outcome.signal) << ")";
  } else {
    text << "exited with code " << outcome.code;
  }
  return text.str();
}

bool outcomeAsExpected(int rank, const RankOutcome& outcome,
                       const RunOptions& options) {
  auto expected = options.expectedSignals.find(rank);
  if (expected != options.expectedSignals.end()) {
    return !outcome.timedOut && outcome.signaled &&
           outcome.signal == expected->second;
  }
  return outcome.exited && outcome.code == 0;
}

// Waits for every child until the deadline (shortened once a child fails
// unexpectedly), then kills those that remain.
void waitForChildren(const std::vector<pid_t>& pids, Clock::time_point start,
                     const RunOptions& options,
                     std::vector<RankOutcome>* outcomes) {
  auto deadline = start + std::chrono::seconds(options.timeoutSeconds);
  std::vector<bool> done(pids.size(), false);
  size_t remaining = pids.size();
  while (remaining > 0 && Clock::now() < deadline) {
    bool progressed = false;
    for (size_t r = 0; r < pids.size(); ++r) {
      if (done[r]) continue;
      int status = 0;
      pid_t got = ::waitpid(pids[r], &status, WNOHANG);
      if (got != pids[r]) continue;
      done[r] = true;
      --remaining;
      progressed = true;
      RankOutcome& outcome = (*outcomes)[r];
      outcome.exited = WIFEXITED(status);
      outcome.code = outcome.exited ? WEXITSTATUS(status) : 0;
      outcome.signaled = WIFSIGNALED(status);
      outcome.signal = outcome.signaled ? WTERMSIG(status) : 0;
      if (!outcomeAsExpected(static_cast<int>(r), outcome, options)) {
        auto grace =
            Clock::now() +
            std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(kGraceAfterFailureSeconds));
        if (grace < deadline) deadline = grace;
      }
    }
    if (!progressed) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (size_t r = 0; r < pids.size(); ++r) {
    if (done[r]) continue;
    ::kill(pids[r], SIGKILL);
    int status = 0;
    ::waitpid(pids[r], &status, 0);
    (*outcomes)[r].timedOut = true;
  }
}

void reportUnexpectedOutcomes(int nranks, RunReport* report,
                              const RunOptions& options) {
  report->ok = true;
  for (int r = 0; r < nranks; ++r) {
    const RankOutcome& outcome = report->ranks[r];
    if (outcomeAsExpected(r, outcome, options)) continue;
    report->ok = false;
    std::ostringstream expected;
    auto signal = options.expectedSignals.find(r);
    if (signal != options.expectedSignals.end()) {
      expected << " (expected: killed by signal " << signal->second << ")";
    }
    ADD_FAILURE() << "rank " << r << " of " << nranks << " "
                  << describeOutcome(outcome) << expected.str()
                  << (outcome.failureMessages.empty() ? "" : ":\n")
                  << outcome.failureMessages;
  }
}

}  // namespace

RunReport runRanks(int nranks, const std::function<void(RankContext&)>& body,
                   const RunOptions& options) {
  RunReport report;
  report.ranks.resize(nranks);
  std::string tempDir = makeTempDir();
  if (tempDir.empty() || nranks <= 0) {
    ADD_FAILURE() << "cannot run " << nranks << " ranks";
    return report;
  }
  IdPipes pipes(nranks);
  auto start = Clock::now();
  pid_t parent = ::getpid();
  std::vector<pid_t> pids;
  // Buffered output would otherwise be written once by every child too.
  std::fflush(nullptr);
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) runChild(r, nranks, parent, pipes, tempDir, body, options);
    if (pid < 0) {
      ADD_FAILURE() << "fork for rank " << r << ": " << std::strerror(errno);
      for (pid_t started : pids) ::kill(started, SIGKILL);
      for (pid_t started : pids) ::waitpid(started, nullptr, 0);
      std::filesystem::remove_all(tempDir);
      return report;
    }
    pids.push_back(pid);
  }
  // Children see EOF on the id pipes only once the parent's ends are closed.
  pipes.closeAll();
  if (options.whileRunning) options.whileRunning(pids);

  waitForChildren(pids, start, options, &report.ranks);
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (int r = 0; r < nranks; ++r) {
    report.ranks[r].failureMessages = readWholeFile(failureFile(tempDir, r));
  }
  reportUnexpectedOutcomes(nranks, &report, options);
  std::error_code ignored;
  std::filesystem::remove_all(tempDir, ignored);
  return report;
}

int findFreeTcpPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace hetccl::mp
