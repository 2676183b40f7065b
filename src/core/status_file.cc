#include "core/status_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "util/error.h"
#include "util/log.h"
#include "util/owned_fd.h"

namespace hetccl {
namespace {

double wallSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool writeAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

StatusFile::StatusFile(const std::string& dir, Identity identity,
                       std::shared_ptr<const CallLog> calls,
                       std::shared_ptr<const WaitDescription> names)
    : identity_(std::move(identity)),
      calls_(std::move(calls)),
      names_(std::move(names)),
      path_(format("%s/%s.rank%d", dir.c_str(), identity_.comm.c_str(),
                   identity_.rank)),
      // A dot first: readers skip it.
      tempPath_(format("%s/.%s.rank%d.tmp", dir.c_str(), identity_.comm.c_str(),
                       identity_.rank)) {}

StatusFile::~StatusFile() {
  ::unlink(tempPath_.c_str());
  ::unlink(path_.c_str());
}

void StatusFile::refresh(const WaitingCall& waiting,
                         const RelayedWaits* relayed) {
  const auto now = std::chrono::steady_clock::now();
  if (written_ &&
      std::chrono::duration<double>(now - lastWrite_).count() < kRefreshSeconds)
    return;
  written_ = true;
  lastWrite_ = now;
  std::string why;
  if (replace(text(waiting, relayed), why) || warned_) return;
  warned_ = true;
  LOG_WARN(kLogColl,
           "rank %d: status file %s not written (%s); later writes are "
           "still tried, without a word",
           identity_.rank, path_.c_str(), why.c_str());
}

std::string StatusFile::text(const WaitingCall& waiting,
                             const RelayedWaits* relayed) const {
  const uint64_t latest = calls_->latest();
  const std::optional<CallSignature> call = calls_->find(latest);
  std::string text = format(
      "comm %s\nrank %d\nnranks %d\nhost %s\npid %d\ntime %.3f\nlatest "
      "%llu\n",
      identity_.comm.c_str(), identity_.rank, identity_.nranks,
      identity_.host.c_str(), identity_.pid, wallSeconds(),
      static_cast<unsigned long long>(latest));
  if (call) text += "latest_op " + describeCall(*call) + "\n";
  // Any wait at all: one that has just begun is worth showing too.
  const std::optional<WaitingCall::Stall> stall = waiting.stalledFor(0);
  if (!stall) return text;
  text += format("waiting %llu %d %.1f\nwaiting_leg %s\n",
                 static_cast<unsigned long long>(stall->sequence), stall->peer,
                 stall->seconds, names_->leg(*stall).c_str());
  // The peer waited for waits itself: the rank at the end of the chain.
  if (relayed) {
    const auto found = relayed->find(stall->peer);
    if (found != relayed->end() && !found->second.chain.empty())
      text += format("waiting_root %d\n", found->second.chain.back());
  }
  return text;
}

bool StatusFile::replace(const std::string& text, std::string& why) const {
  OwnedFd fd(::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                    0644));
  if (!fd.valid() || !writeAll(fd.get(), text) ||
      ::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    why = std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace hetccl
