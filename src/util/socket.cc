#include "util/socket.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/error.h"

namespace hetccl {
namespace {

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    failErrno("cannot make socket %d non-blocking", fd);
}

// Errors that mean "the other side is gone", as opposed to a local fault.
bool isPeerGone(int err) {
  return err == ECONNRESET || err == EPIPE || err == ENOTCONN ||
         err == ECONNABORTED || err == ETIMEDOUT || err == EHOSTUNREACH;
}

}  // namespace

Socket::Socket(OwnedFd fd, const SocketAddress& peer)
    : fd_(std::move(fd)), peer_(peer) {
  setNonBlocking(fd_.get());
  int one = 1;
  // Bootstrap messages are small and latency-bound: never let Nagle hold
  // them back.
  setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

std::string Socket::peerName() const {
  return peerName_.empty() ? peer_.toString() : peerName_;
}

void Socket::failIo(bool sending, const char* what) const {
  int err = errno;
  fail(isPeerGone(err) ? ncclRemoteError : ncclSystemError,
       "%s %s %s %s failed: %s", sending ? "sending" : "receiving", what,
       sending ? "to" : "from", peerName().c_str(), std::strerror(err));
}

size_t Socket::sendSome(const void* data, size_t bytes, const char* what) {
  while (true) {
    ssize_t n = ::send(fd_.get(), data, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    failIo(true, what);
  }
}

size_t Socket::recvSome(void* data, size_t bytes, const char* what) {
  if (bytes == 0) return 0;
  while (true) {
    ssize_t n = ::recv(fd_.get(), data, bytes, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0)
      fail(ncclRemoteError,
           "peer closed the connection: %s, while receiving %s",
           peerName().c_str(), what);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    failIo(false, what);
  }
}

void Socket::sendAll(const void* data, size_t bytes, const Deadline& deadline,
                     const AbortFlags& abort, const char* what) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  std::vector<pollfd> fds{{fd_.get(), POLLOUT, 0}};
  while (done < bytes) {
    size_t n = 0;
    try {
      n = sendSome(p + done, bytes - done, what);
    } catch (const Error& e) {
      fail(e.code(), "%s (%zu of %zu bytes sent)", e.what(), done, bytes);
    }
    done += n;
    if (done == bytes || n > 0) continue;
    if (abort.raised() || deadline.expired())
      checkWait(deadline, abort,
                format("%s to accept %s (%zu of %zu bytes sent)",
                       peerName().c_str(), what, done, bytes));
    fds[0].revents = 0;
    pollSlice(fds, deadline);
  }
}

void Socket::recvAll(void* data, size_t bytes, const Deadline& deadline,
                     const AbortFlags& abort, const char* what) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  std::vector<pollfd> fds{{fd_.get(), POLLIN, 0}};
  while (done < bytes) {
    size_t n = 0;
    try {
      n = recvSome(p + done, bytes - done, what);
    } catch (const Error& e) {
      fail(e.code(), "%s (got %zu of %zu bytes)", e.what(), done, bytes);
    }
    done += n;
    if (done == bytes || n > 0) continue;
    if (abort.raised() || deadline.expired())
      checkWait(deadline, abort,
                format("%s from %s (got %zu of %zu bytes)", what,
                       peerName().c_str(), done, bytes));
    fds[0].revents = 0;
    pollSlice(fds, deadline);
  }
}

}  // namespace hetccl
