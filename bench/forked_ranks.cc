#include "forked_ranks.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "util/error.h"
#include "util/params.h"

namespace hetccl::bench {
namespace {

void writeAll(int fd, const void* data, size_t bytes) {
  const auto* bytesLeft = static_cast<const uint8_t*>(data);
  for (size_t done = 0; done < bytes;) {
    ssize_t n = ::write(fd, bytesLeft + done, bytes - done);
    if (n <= 0) failErrno("out-of-band write");
    done += static_cast<size_t>(n);
  }
}

// False at the end of the stream before the first byte.
bool readAll(int fd, void* data, size_t bytes) {
  auto* into = static_cast<uint8_t*>(data);
  for (size_t done = 0; done < bytes;) {
    ssize_t n = ::read(fd, into + done, bytes - done);
    if (n == 0 && done == 0) return false;
    if (n <= 0) failErrno("out-of-band read");
    done += static_cast<size_t>(n);
  }
  return true;
}

// The parent's side of RelayOob: one all-gather after another until the
// ranks close their ends.
void relayExchanges(std::vector<OwnedFd>& ranks) {
  for (;;) {
    std::vector<uint8_t> row;
    uint64_t length = 0;
    for (size_t r = 0; r < ranks.size(); ++r) {
      uint64_t mine = 0;
      if (!readAll(ranks[r].get(), &mine, sizeof mine)) return;
      if (r == 0) {
        length = mine;
        row.resize(length * ranks.size());
      }
      if (mine != length)
        fail(ncclInternalError, "the ranks gather unlike slots");
      readAll(ranks[r].get(), row.data() + r * length, length);
    }
    for (auto& fd : ranks) writeAll(fd.get(), row.data(), row.size());
  }
}

}  // namespace

void RelayOob::allGather(void* data, size_t bytesPerRank) {
  auto* slots = static_cast<uint8_t*>(data);
  const uint64_t length = bytesPerRank;
  writeAll(fd_.get(), &length, sizeof length);
  writeAll(fd_.get(), slots + bytesPerRank * rank_, bytesPerRank);
  if (!readAll(fd_.get(), slots, bytesPerRank * nranks_))
    fail(ncclSystemError, "the parent went away");
}

void RelayOob::barrier() {
  std::vector<uint8_t> slots(nranks_);
  allGather(slots.data(), 1);
}

int runForkedRanks(const char* tool, int nranks,
                   const std::function<void(RelayOob& oob)>& rank) {
  std::vector<OwnedFd> parentEnds;
  std::vector<pid_t> children;
  for (int r = 0; r < nranks; ++r) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
      failErrno("socketpair");
    OwnedFd childEnd(fds[1]);
    parentEnds.emplace_back(fds[0]);
    std::fflush(stdout);  // nothing buffered is printed twice
    pid_t child = ::fork();
    if (child < 0) failErrno("fork");
    if (child == 0) {
      parentEnds.clear();  // a rank sees the end of the relay only
      try {
        RelayOob oob(r, nranks, std::move(childEnd));
        rank(oob);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: rank %d: %s\n", tool, r, e.what());
        std::fflush(stdout);
        _exit(1);
      }
      std::fflush(stdout);
      _exit(0);
    }
    children.push_back(child);
  }
  int failed = 0;
  try {
    relayExchanges(parentEnds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    failed = 1;
  }
  parentEnds.clear();  // ranks still waiting for a row see the end
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  return failed;
}

double slowestOf(Oob& oob, double seconds) {
  std::vector<double> all(oob.nranks());
  all[oob.rank()] = seconds;
  oob.allGather(all.data(), sizeof(double));
  return *std::max_element(all.begin(), all.end());
}

size_t sizeValue(const char* tool, const std::string& text) {
  int64_t value = 0;
  if (!parseSize(text, &value) || value <= 0)
    fail(ncclInvalidArgument, "%s: bad size '%s'", tool, text.c_str());
  return static_cast<size_t>(value);
}

}  // namespace hetccl::bench
