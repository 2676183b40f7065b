#include "core/watchdog.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "util/error.h"
#include "util/log.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace hetccl {

Watchdog::Watchdog(std::vector<Peer> peers, ExitHandler onExit)
    : onExit_(std::move(onExit)) {
  for (const Peer& peer : peers) {
    int fd = static_cast<int>(syscall(SYS_pidfd_open, peer.pid, 0));
    if (fd < 0) {
      // Already gone, or not visible from here: nothing to watch.
      LOG_INFO(kLogInit, "cannot watch rank %d (pid %d): errno %d", peer.rank,
               peer.pid, errno);
      continue;
    }
    peers_.push_back(peer);
    pidfds_.push_back(fd);
  }
  stopFd_ = eventfd(0, EFD_CLOEXEC);
  if (stopFd_ < 0) {
    for (int fd : pidfds_) close(fd);
    failErrno("eventfd");
  }
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  uint64_t one = 1;
  // An eventfd write of 8 bytes cannot fail short of a closed descriptor.
  ssize_t written = write(stopFd_, &one, sizeof(one));
  (void)written;
  thread_.join();
  for (int fd : pidfds_) close(fd);
  close(stopFd_);
}

void Watchdog::watch() {
  std::vector<pollfd> fds;
  fds.push_back({stopFd_, POLLIN, 0});
  for (int fd : pidfds_) fds.push_back({fd, POLLIN, 0});
  for (;;) {
    int ready = poll(fds.data(), fds.size(), -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || (fds[0].revents & POLLIN)) return;
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      onExit_(peers_[i - 1]);
      fds[i].fd = -1;  // poll ignores negative descriptors
    }
  }
}

}  // namespace hetccl
