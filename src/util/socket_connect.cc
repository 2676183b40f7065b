#include "util/socket_connect.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "util/error.h"
#include "util/log.h"
#include "util/owned_fd.h"

namespace hetccl {
namespace {

// Connect errors worth retrying: typically nothing listens there yet.
bool isRetryableConnectError(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH ||
         err == ECONNRESET || err == ECONNABORTED;
}

bool isSelfConnected(int fd) {
  sockaddr_storage local{}, remote{};
  socklen_t localLength = sizeof(local), remoteLength = sizeof(remote);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLength) < 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remoteLength) < 0)
    return false;
  return localLength == remoteLength &&
         std::memcmp(&local, &remote, localLength) == 0;
}

// Waits for a non-blocking connect to finish; returns its errno (0: done).
int finishConnect(int fd, const SocketAddress& address,
                  const Deadline& deadline, const AbortFlags& abort,
                  const char* what) {
  std::vector<pollfd> fds{{fd, POLLOUT, 0}};
  while (true) {
    if (abort.raised() || deadline.expired())
      checkWait(
          deadline, abort,
          format("a connection to %s at %s", what, address.toString().c_str()));
    fds[0].revents = 0;
    if (pollSlice(fds, deadline) > 0) break;
  }
  int err = 0;
  socklen_t length = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &length) < 0) return errno;
  return err;
}

// Sleeps `ms` in poll slices, failing on abort or at the deadline.
void backOff(int ms, const Deadline& deadline, const AbortFlags& abort,
             const std::string& what) {
  while (ms > 0) {
    checkWait(deadline, abort, what);
    int slice = std::min(ms, deadline.pollSliceMs());
    std::this_thread::sleep_for(std::chrono::milliseconds(slice));
    ms -= slice;
  }
}

// One attempt; returns its errno, or 0 with the connection in `connected`.
int connectOnce(const SocketAddress& address, const Deadline& deadline,
                const AbortFlags& abort, const char* what, OwnedFd* connected) {
  OwnedFd fd(::socket(address.family(),
                      SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) failErrno("cannot create a socket to connect to %s", what);
  int err = 0;
  if (::connect(fd.get(), address.get(), address.length()) < 0)
    err = (errno == EINPROGRESS || errno == EINTR)
              ? finishConnect(fd.get(), address, deadline, abort, what)
              : errno;
  // Retrying a local port that nobody listens on can end in TCP's
  // simultaneous open with ourselves; that is "not up yet" too.
  if (err == 0 && isSelfConnected(fd.get())) err = ECONNREFUSED;
  if (err == 0) *connected = std::move(fd);
  return err;
}

}  // namespace

Socket connectTo(const SocketAddress& address, const Deadline& deadline,
                 const AbortFlags& abort, const char* what, ConnectMode mode) {
  HETCCL_CHECK_ARG(!address.empty(), "cannot connect to %s: no address", what);
  int delayMs = 5;
  for (int attempts = 1;; ++attempts) {
    OwnedFd connected;
    const int err = connectOnce(address, deadline, abort, what, &connected);
    if (err == 0) {
      LOG_TRACE(kLogNet, "connected to %s at %s after %d attempt(s)", what,
                address.toString().c_str(), attempts);
      return Socket(std::move(connected), address);
    }
    if (err == ECONNREFUSED && mode == ConnectMode::kListenerIsUp)
      fail(ncclRemoteError,
           "%s at %s refused the connection: its process is gone", what,
           address.toString().c_str());
    if (!isRetryableConnectError(err)) {
      errno = err;
      failErrno("cannot connect to %s at %s", what, address.toString().c_str());
    }
    backOff(
        delayMs, deadline, abort,
        format("%s at %s to accept a connection (%d attempt(s), last "
               "error: %s)",
               what, address.toString().c_str(), attempts, std::strerror(err)));
    delayMs = std::min(delayMs * 2, kPollSliceMs);
  }
}

}  // namespace hetccl
