#include "harness/run_ranks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include <gtest/gtest.h>

#include "harness/check.h"
#include "kit/temp_dir.h"

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

// What `options` sets for one rank; rankEnv wins over env.
std::map<std::string, std::string> rankEnvironment(int rank,
                                                   const RunOptions& options) {
  std::map<std::string, std::string> variables = options.env;
  if (options.rankEnv) {
    for (auto& [name, value] : options.rankEnv(rank)) {
      variables[name] = std::move(value);
    }
  }
  return variables;
}

std::string failureFile(const std::string& tempDir, int rank) {
  return tempDir + "/rank" + std::to_string(rank) + ".failures";
}

int runChild(int rank, int nranks, IdPipes& pipes, const std::string& tempDir,
             const std::function<void(RankContext&)>& body,
             const RunOptions& options) {
  pipes.keepOnlyFor(rank);
  setFailureReporting(rank, failureFile(tempDir, rank));
  if (options.enterRank) options.enterRank(rank);

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
  return 0;
}

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  if (in) contents << in.rdbuf();
  return contents.str();
}

bool outcomeAsExpected(int rank, const kit::RankExit& outcome,
                       const RunOptions& options) {
  auto expected = options.expectedSignals.find(rank);
  if (expected != options.expectedSignals.end()) {
    return !outcome.stopped && outcome.signaled &&
           outcome.signal == expected->second;
  }
  return !outcome.stopped && outcome.succeeded();
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
                  << outcome.describe() << expected.str()
                  << (outcome.failureMessages.empty() ? "" : ":\n")
                  << outcome.failureMessages;
  }
}

// Runs the ranks with their scratch directory and fills `report`, adding a
// gtest failure for every rank that did not end as expected.
void launchInto(int nranks, const std::function<void(RankContext&)>& body,
                const RunOptions& options, const std::string& tempDir,
                RunReport* report) {
  IdPipes pipes(nranks);
  kit::LaunchOptions launch;
  launch.nranks = nranks;
  launch.timeoutSeconds = options.timeoutSeconds;
  launch.rankEnvironment = [&](int rank) {
    return rankEnvironment(rank, options);
  };
  launch.isExpected = [&](int rank, const kit::RankExit& exit) {
    return outcomeAsExpected(rank, exit, options);
  };
  launch.graceAfterFailureSeconds = kGraceAfterFailureSeconds;
  launch.whileRunning = [&](const std::vector<pid_t>& pids) {
    // Children see EOF on the id pipes only once the parent's ends are closed.
    pipes.closeAll();
    if (options.whileRunning) options.whileRunning(pids);
  };
  const kit::LaunchReport launched = kit::launchRanks(launch, [&](int rank) {
    return runChild(rank, nranks, pipes, tempDir, body, options);
  });
  report->seconds = launched.seconds;
  for (int r = 0; r < nranks; ++r) {
    static_cast<kit::RankExit&>(report->ranks[r]) = launched.ranks[r];
    report->ranks[r].failureMessages = readWholeFile(failureFile(tempDir, r));
  }
  reportUnexpectedOutcomes(nranks, report, options);
}

}  // namespace

RunReport runRanks(int nranks, const std::function<void(RankContext&)>& body,
                   const RunOptions& options) {
  RunReport report;
  if (nranks <= 0) {
    ADD_FAILURE() << "cannot run " << nranks << " ranks";
    return report;
  }
  report.ranks.resize(nranks);
  try {
    kit::TempDir tempDir("hetccl-mp-");
    launchInto(nranks, body, options, tempDir.path(), &report);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "running " << nranks << " ranks: " << e.what();
  }
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
